// A client's request body with a Content-Encoding (gzip, deflate, br; zstd where Node has it):
// decoded, bounded by the body limit, so the client's rules and blocks see what the server will
// read. The bytes forwarded stay the client's own; a coding the proxy cannot undo is refused with
// 415, never passed unread.
import { ProxyError } from '../errors.ts';
import { codingOf, decodeBounded } from './content-coding.ts';

/** The body as the server will read it: `body` itself when it carries no coding. */
export async function decodedRequestBody(body: Buffer, header: string | string[] | undefined, maxBytes: number): Promise<Buffer> {
  const coding = codingOf(header);
  if (coding.kind === 'identity') return body;
  if (coding.kind === 'unknown') {
    throw new ProxyError(
      'WARDEN_UNSUPPORTED_ENCODING',
      `Request Content-Encoding "${coding.name}" cannot be read by the proxy; send gzip, deflate, br or none`,
    );
  }
  const decoded = await decodeBounded(body, coding, maxBytes);
  if (decoded.kind === 'decoded') return decoded.bytes;
  if (decoded.kind === 'too-large')
    throw new ProxyError('WARDEN_BODY_TOO_LARGE', `Decoded request body exceeds the limit of ${maxBytes} bytes`);
  throw new ProxyError('WARDEN_BAD_REQUEST', `Request body is not valid ${coding.name} data`, { cause: decoded.error });
}
