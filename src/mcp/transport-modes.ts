// How the proxy tells the transports apart: learned per stream (auto), or fixed by --transport.
// A leaf module: the command line reads it without loading the transports.

export type TransportMode = 'auto' | 'sse' | 'streamable-http';

export const TRANSPORT_MODES: readonly TransportMode[] = ['auto', 'sse', 'streamable-http'];
