// Which request targets name the MCP endpoint. Common servers route loosely: Express matches
// `/MCP` and `/mcp/` to `/mcp` (case-insensitive, non-strict), others collapse `//`, resolve dot
// segments or decode percent-escapes. Every spelling the upstream may serve as its MCP endpoint
// must reach the pipeline, or it crosses unjudged; so the proxy compares a canonical form.

/** The path of a request target (origin or absolute form), without query or fragment. */
export function targetPath(target: string): string {
  let path = target;
  if (!path.startsWith('/')) {
    // Absolute form (`POST http://proxy/mcp HTTP/1.1`): only its path names the resource.
    const m = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(path);
    path = m ? path.slice(m[0].length) || '/' : path;
  }
  const end = path.search(/[?#]/);
  return end < 0 ? path : path.slice(0, end);
}

function decodeSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/**
 * The canonical form of a path: percent-decoded (once, as routers do), `;params` cut from each
 * segment, empty and `.` segments dropped, `..` resolved, lower-cased, no trailing slash.
 */
export function canonicalPath(path: string): string {
  const out: string[] = [];
  for (const raw of decodeSafe(path).replace(/\\/g, '/').split('/')) {
    const segment = raw.split(';')[0]!;
    if (segment === '' || segment === '.') continue;
    if (segment === '..') out.pop();
    else out.push(segment.toLowerCase());
  }
  return `/${out.join('/')}`;
}

/** A matcher for the MCP endpoint's path: true for every spelling that canonicalises to it. */
export function endpointMatcher(mcpPath: string): (target: string) => boolean {
  const canonical = canonicalPath(mcpPath);
  return (target) => {
    const path = targetPath(target);
    // The common case, exactly the configured path, needs no work.
    return path === mcpPath || canonicalPath(path) === canonical;
  };
}
