// The first answers say whether the proxy points at an MCP server at all. An upstream that answers
// the first MCP requests with 404 or 405 and no JSON, or with an HTML page, is most likely the
// wrong URL (`--upstream` naming another path or another service): the findings would blame the
// server for the operator's mistake. One error-level record says so, names `--upstream` and the
// paths the clients used, and the proxy watches no further once a real MCP answer came.
import { mediaType, noMcpAnswer } from '../mcp/media-type.ts';

/** How many answers are watched before the proxy stops wondering. */
const WATCHED = 3;
/** Distinct client paths kept for the record. */
const MAX_PATHS = 5;

export interface Misconfiguration {
  status: number;
  /** The answer's media type ('' when it had none). */
  contentType: string;
  /** The paths clients sent MCP traffic to so far. */
  paths: string[];
}

export class MisconfigurationWatch {
  private seen = 0;
  private done = false;
  private readonly paths = new Set<string>();

  /** An MCP request's answer began (`path`: where the client sent it): the misconfiguration, the first time one shows. */
  answered(path: string, status: number, contentTypeHeader: string | readonly string[] | undefined): Misconfiguration | undefined {
    if (this.done) return undefined;
    if (this.paths.size < MAX_PATHS) this.paths.add(path);
    const contentType = mediaType(contentTypeHeader);
    this.done = ++this.seen >= WATCHED;
    if (!noMcpAnswer(status, contentType)) {
      // A real answer (or an error an MCP server gives): nothing to say, ever.
      if (status < 400 || contentType === 'application/json' || contentType === 'text/event-stream') this.done = true;
      return undefined;
    }
    this.done = true;
    return { status, contentType, paths: [...this.paths] };
  }
}
