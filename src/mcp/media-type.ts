// The media type a Content-Type field names. A server may send the field twice (undici hands the
// copies over as an array) or one value joined by commas ("text/event-stream, text/event-stream"):
// when every copy names the same type, that is the type; a stream sent so is still a stream.

/**
 * The media type, lowercased, without parameters; '' when absent. Copies that name different
 * types give them all, joined by ", " (no such type exists, so nothing matches it by accident).
 */
export function mediaType(field: string | readonly string[] | undefined): string {
  if (field === undefined) return '';
  // The common case: one value, no list.
  if (typeof field === 'string' && !field.includes(',')) return typeOf(field);
  const types: string[] = [];
  for (const value of typeof field === 'string' ? [field] : field) {
    for (const member of listMembers(value)) {
      const type = typeOf(member);
      if (type !== '' && !types.includes(type)) types.push(type);
    }
  }
  return types.join(', ');
}

const typeOf = (value: string): string => value.split(';')[0]!.trim().toLowerCase();

/** The members of a comma-separated field value; a comma inside a quoted parameter value does not separate. */
function listMembers(value: string): string[] {
  const out: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (quoted && c === '\\') i++;
    else if (c === '"') quoted = !quoted;
    else if (c === ',' && !quoted) {
      out.push(value.slice(start, i));
      start = i + 1;
    }
  }
  out.push(value.slice(start));
  return out;
}

/**
 * Whether an answer is one no MCP endpoint gives: a web page, or a routing miss (404/405 with
 * neither JSON nor an event stream). Such an answer says the URL is wrong, not that the server is.
 */
export function noMcpAnswer(status: number, type: string): boolean {
  if (type === 'text/html') return true;
  if (status !== 404 && status !== 405) return false;
  return type !== 'application/json' && type !== 'text/event-stream';
}
