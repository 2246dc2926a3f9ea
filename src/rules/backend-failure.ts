// Whether a failure's text blames something the tool depends on (a backend it could not reach, a
// name it could not resolve, a call that timed out) rather than the call's arguments. Such a
// failure says what is wrong, and nothing the model could change in its arguments would fix it:
// vague-iserror, which asks a failure to name the argument at fault, leaves it alone (issue 43:
// "connect ECONNREFUSED", "fetch failed" from servers whose backend was down).

const BACKEND_FAILURE = new RegExp(
  [
    // Node.js and libc system errors about the network.
    String.raw`\bE(?:CONNREFUSED|CONNRESET|CONNABORTED|TIMEDOUT|HOSTUNREACH|NETUNREACH|NOTFOUND|AI_AGAIN|PIPE)\b`,
    // The same in words, as Go, Python, Rust and curl say them.
    String.raw`\bconnection (?:refused|reset|timed out|closed)\b|\bnetwork is unreachable\b|\bno route to host\b|\bsocket hang up\b`,
    // undici's "fetch failed", name resolution, DNS.
    String.raw`\bfetch failed\b|\bgetaddrinfo\b|\bno such host\b|\bcould not resolve (?:host|hostname)\b|\bname (?:resolution|or service not known)\b|\bDNS\b`,
    // A call that ran out of time, and the gateway statuses that say the backend did.
    String.raw`\btimed out\b|\bdeadline exceeded\b|\bbad gateway\b|\bservice unavailable\b|\bgateway timeout\b`,
  ].join('|'),
  'i',
);

/** Whether `text` names a failure of something the tool depends on, not of its arguments. */
export const namesBackendFailure = (text: string): boolean => BACKEND_FAILURE.test(text);
