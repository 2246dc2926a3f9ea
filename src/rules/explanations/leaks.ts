// Explanations of the leak rules: what a failure's text tells an attacker about the server.
import { LEAK_FRAMEWORKS } from './frameworks.ts';
import type { Explanation } from './types.ts';

const SECURITY = {
  text: 'Log messages MUST NOT contain: Credentials or secrets ... Internal system details that could aid attacks',
  from: '2026-07-28',
};
const CALL = '→ {"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"lookup_user","arguments":{"id":"42"}}}';
const GOOD = `${CALL}\n← {"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"User lookup failed; try again later"}}`;
const THROWN =
  " A thrown error's message usually becomes this text word for word: catch it at the tool's edge, log it, and answer with words of your own.";

export const LEAK_EXPLANATIONS: Readonly<Record<string, Explanation>> = {
  'leaked-stack-trace': {
    why: SECURITY,
    bad: `${CALL}\n← {"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"TypeError: Cannot read properties of undefined\\n    at lookup (/srv/app/users.js:12:7)"}}`,
    good: GOOD,
    fix: `Keep stack traces in the server log; send a short message saying what failed and what the caller can do, without code locations.${THROWN}`,
    frameworks: LEAK_FRAMEWORKS,
  },
  'leaked-path': {
    why: SECURITY,
    bad: `${CALL}\n← {"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"ENOENT: open '/home/deploy/app/data/users.db'"}}`,
    good: GOOD,
    fix: `Keep absolute paths in the server log; name files by what the client knows (a resource URI, a path relative to a root it shared) or not at all.${THROWN}`,
    frameworks: LEAK_FRAMEWORKS,
  },
  'leaked-private-address': {
    why: SECURITY,
    bad: `${CALL}\n← {"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"connect ECONNREFUSED 10.0.3.17:5432"}}`,
    good: GOOD,
    fix: `Name the failing dependency by its role ("the user database"), not by its address; keep addresses in the server log.${THROWN}`,
    frameworks: LEAK_FRAMEWORKS,
  },
  'leaked-internal-host': {
    why: SECURITY,
    bad: `${CALL}\n← {"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"getaddrinfo ENOTFOUND users-db.prod.internal"}}`,
    good: GOOD,
    fix: `Name the failing dependency by its role, not by hostname or connection string (it may carry credentials); keep those in the server log.${THROWN}`,
    frameworks: LEAK_FRAMEWORKS,
  },
};
