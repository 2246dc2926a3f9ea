// The policy file's JSON Schema, built from the rule catalogue so that the `rules` keys are exactly
// the rule ids and groups there are. config/policy.schema.json is this object serialized (a test
// keeps the two equal); editors (yaml-language-server) complete and check policy files with it,
// and the loader validates with it (ajv, draft-07) before its own checks.
// Regenerate: node --import tsx src/cli.ts policy schema > config/policy.schema.json
import { DEFAULT_LIMITS } from './defaults.ts';
import { describeVersions } from '../rules/catalogue.ts';
import type { RuleInfo } from '../rules/types.ts';
import { formatDuration, formatSize } from './words.ts';

export const MODES = ['audit', 'enforce'] as const;
export const ACTIONS = ['off', 'log', 'rewrite', 'block'] as const;
export const SEVERITIES = ['error', 'warning', 'info'] as const;
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error'] as const;
export const ARGUMENT_LOGGING = ['off', 'redacted', 'full'] as const;
export const DEFAULT_MARKER = '[redacted]';
/** The group whose rules a `patterns.leaks` entry may name. */
export const LEAK_GROUP = 'leaks';

/** Keys of each mapping of the file, in the order the schema (and error messages) list them. */
export const KEYS = {
  '': ['mode', 'upstream', 'security', 'limits', 'log', 'redaction', 'answers', 'patterns', 'scope', 'capture', 'defaults', 'rules'],
  upstream: ['url', 'timeout', 'idleTimeout', 'connectTimeout', 'hostHeader', 'transport'],
  security: ['allowedHosts', 'allowedOrigins'],
  scope: ['passthrough', 'unjudged'],
  limits: ['maxRequestBody', 'auditBody', 'auditEvent', 'maxSessions', 'sessionIdle'],
  log: ['level', 'arguments'],
  redaction: ['marker'],
  answers: ['unknownTool'],
  patterns: ['leaks', 'silentSuccess'],
  leak: ['rule', 'pattern'],
  silentSuccess: ['add', 'replace'],
  capture: ['path'],
  defaults: ['action'],
  ruleSetting: ['action', 'severity', 'methods', 'tools'],
} as const;

/** Groups in catalogue order, each once. */
export function ruleGroups(rules: readonly RuleInfo[]): string[] {
  return [...new Set(rules.map((r) => r.group))];
}

export type JsonSchema = { [key: string]: unknown };

const nullable = (type: string): string[] => [type, 'null'];

const DURATION_PATTERN = String.raw`^\s*\d+(\.\d+)?\s*(ms|s|m)?\s*$`;
const SIZE_PATTERN = String.raw`^\s*\d+(\.\d+)?\s*([bB]|[kKmMgG][iI]?[bB])?\s*$`;

function ruleDescription(rule: RuleInfo): string {
  return `Rule: ${rule.summary}. Group ${rule.group}; severity ${rule.severity}; broken by the ${rule.party}; versions: ${describeVersions(rule.versions)}.`;
}

function groupDescription(group: string, rules: readonly RuleInfo[]): string {
  const members = rules.filter((r) => r.group === group).map((r) => r.id);
  return `Group ${group}: ${members.join(', ')}. Applies to each of them unless the rule has an entry of its own that matches.`;
}

/** The policy JSON Schema (draft-07) for these rules. */
export function buildPolicySchema(rules: readonly RuleInfo[]): JsonSchema {
  const ids = rules.map((r) => r.id);
  const groups = ruleGroups(rules);
  const names = [...ids, ...groups.filter((g) => !ids.includes(g))];
  const leakRules = rules.filter((r) => r.group === LEAK_GROUP).map((r) => r.id);

  const ruleProperties: Record<string, JsonSchema> = {};
  for (const name of names) {
    const rule = rules.find((r) => r.id === name);
    // A rule that is its group's only member (silent-success) is described once, as a rule.
    const onlyItself = rule !== undefined && rules.every((r) => r.group !== name || r.id === name);
    const text = [rule ? ruleDescription(rule) : '', groups.includes(name) && !onlyItself ? groupDescription(name, rules) : '']
      .filter(Boolean)
      .join(' ');
    ruleProperties[name] = { description: text, $ref: '#/definitions/ruleEntry' };
  }

  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'mcp-warden policy',
    description:
      'What mcp-warden does with each finding of its rules, and the settings of the proxy. Load it with `mcp-warden proxy --policy FILE`; check it with `mcp-warden policy check FILE`. Every key is optional; a file of `{}` is audit mode with every rule logged.',
    type: 'object',
    additionalProperties: false,
    properties: {
      mode: {
        description:
          'audit: findings are logged and the traffic passes unchanged, whatever the rules say (staging). enforce: the `rewrite` and `block` actions are applied (production). In audit mode each rule still resolves to its configured action (so the log can say what enforce mode would do), but nothing is rewritten or blocked. Default audit.',
        enum: [...MODES],
        default: 'audit',
      },
      upstream: {
        description: 'The MCP server the proxy forwards to. Every key is optional; the command line wins over these.',
        type: nullable('object'),
        additionalProperties: false,
        properties: {
          url: {
            description: "The MCP server's endpoint URL (http or https), e.g. http://127.0.0.1:3000/mcp. Same as --upstream.",
            type: 'string',
            pattern: '^[Hh][Tt][Tt][Pp][Ss]?://\\S+$',
          },
          timeout: {
            description: `Time the upstream has to send response headers (then 504). Default ${formatDuration(DEFAULT_LIMITS.upstreamHeadersTimeoutMs)}. Same as --timeout.`,
            $ref: '#/definitions/duration',
          },
          idleTimeout: {
            description: `Longest silence inside an upstream response body; 0: none. Default ${formatDuration(DEFAULT_LIMITS.upstreamBodyTimeoutMs)}. Same as --idle-timeout.`,
            $ref: '#/definitions/duration',
          },
          connectTimeout: {
            description: `Time to connect to the upstream. Default ${formatDuration(DEFAULT_LIMITS.upstreamConnectTimeoutMs)}.`,
            $ref: '#/definitions/duration',
          },
          hostHeader: {
            description:
              "The Host sent upstream. client: the client's, as it came (the upstream's DNS-rebinding check needs it); upstream: the upstream URL's (virtual-hosted upstreams). Default client. Same as --host-header. Read at start.",
            enum: ['client', 'upstream'],
          },
          transport: {
            description:
              'The MCP transport the upstream speaks. auto: learned per stream (a GET stream whose first event is `endpoint` is a legacy HTTP+SSE session); sse: the legacy HTTP+SSE transport of 2024-11-05 (also a POST for a session the proxy does not know is legacy traffic, answered 404); streamable-http: Streamable HTTP only (an endpoint event is judged as any event). Default auto. Same as --transport. Read at start.',
            enum: ['auto', 'sse', 'streamable-http'],
          },
        },
      },
      security: {
        description: "The proxy's own DNS-rebinding guard. The command line wins over these; read at start.",
        type: nullable('object'),
        additionalProperties: false,
        properties: {
          allowedHosts: {
            description:
              'Host values a request may carry (a name, or name:port; "*" for any); others get 403. Default: localhost, 127.0.0.1 and [::1] when listening on a loopback address, else any. Same as --allowed-hosts.',
            type: 'array',
            items: { type: 'string', minLength: 1 },
          },
          allowedOrigins: {
            description:
              'Origin values a request may carry (scheme://host[:port]; "*" for any); a request without Origin always passes. Default: origins on the loopback names when listening on a loopback address, else any. Same as --allowed-origins.',
            type: 'array',
            items: { type: 'string', minLength: 1 },
          },
        },
      },
      limits: {
        description: 'Size and session limits. The command line wins over these.',
        type: nullable('object'),
        additionalProperties: false,
        properties: {
          maxRequestBody: {
            description: `Largest request body a client may send (then 413). Default ${formatSize(DEFAULT_LIMITS.maxRequestBytes)}. Same as --max-body.`,
            $ref: '#/definitions/size',
          },
          auditBody: {
            description: `Largest response body the proxy parses; larger ones stream through unaudited. Default ${formatSize(DEFAULT_LIMITS.auditBodyBytes)}. Same as --audit-limit.`,
            $ref: '#/definitions/size',
          },
          auditEvent: {
            description: `Largest SSE event the proxy parses; larger ones pass through unaudited. Default ${formatSize(DEFAULT_LIMITS.auditEventBytes)}.`,
            $ref: '#/definitions/size',
          },
          maxSessions: {
            description: `Sessions remembered at once (per process); past it the least recently used is forgotten. Default ${DEFAULT_LIMITS.maxSessions}.`,
            type: 'integer',
            minimum: 1,
          },
          sessionIdle: {
            description: `A session unused this long is forgotten. Default ${formatDuration(DEFAULT_LIMITS.sessionIdleMs)}.`,
            $ref: '#/definitions/duration',
          },
        },
      },
      log: {
        description: 'What the log says.',
        type: nullable('object'),
        additionalProperties: false,
        properties: {
          level: { description: 'Log level. Default info. Same as --log-level (which wins).', enum: [...LOG_LEVELS] },
          arguments: {
            description:
              'Tool arguments on exchange records. off: left out; redacted: the argument names with values redacted; full: as sent minus credentials (values under credential names and credential-shaped text are redacted; personal data is not). Default redacted.',
            enum: [...ARGUMENT_LOGGING],
            default: 'redacted',
          },
        },
      },
      redaction: {
        description: 'How rewritten messages hide what they remove.',
        type: nullable('object'),
        additionalProperties: false,
        properties: {
          marker: {
            description: `What replaces a leaked internal (stack trace, path, address, host) in a rewritten message. Default "${DEFAULT_MARKER}".`,
            type: 'string',
            default: DEFAULT_MARKER,
          },
        },
      },
      answers: {
        description: 'Which answers the rules expect where the field disputes the spec.',
        type: nullable('object'),
        additionalProperties: false,
        properties: {
          unknownTool: {
            description:
              'A tools/call of a tool the server does not have. spec (default): what the session\'s protocol version says: every version so far lists "Unknown tool" among protocol errors, JSON-RPC error -32602 (server/tools#error-handling), so an isError result is flagged (unknown-tool-as-iserror). iserror: SEP-2145 (open) proposes an isError result the model can read; a server that answers so on purpose is not flagged for it (-32602 is accepted too; a plain result or another code still is).',
            enum: ['spec', 'iserror'],
            default: 'spec',
          },
        },
      },
      patterns: {
        description:
          'Extra patterns for the rules that search text. Write regular expressions in single quotes: in double quotes YAML reads "\\b" as a backspace.',
        type: nullable('object'),
        additionalProperties: false,
        properties: {
          leaks: {
            description:
              'Extra leak patterns, each for one leak rule, added to the built-in ones. A JavaScript regular expression, case-sensitive, matched against error text.',
            type: nullable('array'),
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['rule', 'pattern'],
              properties: {
                rule: { description: 'The leak rule a match is reported as.', enum: leakRules },
                pattern: {
                  description: "A JavaScript regular expression (case-sensitive), e.g. '\\bvault-[a-z0-9-]+\\b'.",
                  type: 'string',
                  minLength: 1,
                },
              },
            },
          },
          silentSuccess: {
            description: 'Text that makes a tools/call result read as a failure (the silent-success rule).',
            type: nullable('object'),
            additionalProperties: false,
            properties: {
              add: {
                description:
                  "JavaScript regular expressions, matched case-insensitive and multiline (^ and $ match at line ends) against the start of a result's text.",
                type: nullable('array'),
                items: { type: 'string', minLength: 1 },
              },
              replace: {
                description: 'true: use only the patterns of `add`; false (default): add them to the built-in ones.',
                type: 'boolean',
                default: false,
              },
            },
          },
        },
      },
      scope: {
        description:
          'Which traffic is MCP traffic. The configured endpoint always is; on any other path, a POST whose body is JSON-RPC is (and the GET and DELETE of that path, a GET asking for an SSE stream, a request with Mcp-Session-Id). Read on every request (a reload changes it).',
        type: nullable('object'),
        additionalProperties: false,
        properties: {
          passthrough: {
            description:
              'Paths relayed unjudged even when they carry JSON-RPC (a JSON-RPC API that is not MCP): exact paths, or prefixes ending in "*" ("/api/*"). Each such exchange is logged at warn and counted in mcp_warden_unjudged_total{reason="scoped-out"}. The configured endpoint cannot be scoped out.',
            type: 'array',
            items: { type: 'string', pattern: '^/', minLength: 1 },
          },
          unjudged: {
            description:
              'What enforce does with an answer the proxy cannot judge in full (past the audit limit, in a coding it cannot undo, nested too deep): relay (default) sends it on as it came, counted and logged; block answers the client with a JSON-RPC error carrying the request id instead. It is the action of the rules unaudited-response, unreadable-request and unreadable-response wherever `rules` does not name them. Traffic scope.passthrough names is never blocked, nor a tools/call whose schema check alone was skipped (unsafe-schema: a pattern RE2 cannot run; the answer was read and judged by every other rule).',
            enum: ['relay', 'block'],
          },
        },
      },
      capture: {
        description:
          'Opt-in capture of every exchange to a file, as JSON lines with secrets redacted. Leave out (or empty) for no capture.',
        type: nullable('object'),
        additionalProperties: false,
        required: ['path'],
        properties: {
          path: {
            description: "The capture file; a relative path is relative to the policy file's directory.",
            type: 'string',
            minLength: 1,
          },
        },
      },
      defaults: {
        description: 'What applies to every rule that no entry of `rules` names (by id or group).',
        type: nullable('object'),
        additionalProperties: false,
        properties: {
          action: { description: 'The action of every rule not named in `rules`. Default log.', $ref: '#/definitions/action' },
        },
      },
      rules: {
        description:
          "Per rule (by id) or per group: an action, a mapping with action, severity, methods and tools, or a list of those tried in order (the first whose scope matches applies). For a finding, the entry of its rule id wins if its scope matches; else the entry of its group if its scope matches; else defaults.action. Severity: the override of that entry, else the rule's own. `mcp-warden rules` lists ids and groups.",
        type: nullable('object'),
        propertyNames: { enum: names },
        properties: ruleProperties,
      },
    },
    definitions: {
      action: {
        description:
          'off: drop the finding. log: log it, change nothing. rewrite: put the message right (normalise it to what the spec asks) in enforce mode. block: in enforce mode, answer the client with a JSON-RPC error and do not pass the message on.',
        enum: [...ACTIONS],
      },
      severity: { description: "The severity the finding is logged with, instead of the rule's own.", enum: [...SEVERITIES] },
      duration: {
        description: 'A duration: 500ms, 30s, 5m, or a number of milliseconds.',
        type: ['string', 'number'],
        pattern: DURATION_PATTERN,
        minimum: 0,
        examples: ['500ms', '30s', '5m', 60000],
      },
      size: {
        description: 'A size in bytes: 512kb, 4mib, 1gb, or a number of bytes (b, kb, kib, mb, mib, gb, gib).',
        type: ['string', 'number'],
        pattern: SIZE_PATTERN,
        minimum: 0,
        examples: ['512kib', '4mib', 1048576],
      },
      globs: {
        description:
          'Name patterns; `*` matches any run of characters, `?` one. The entry applies when any pattern matches (an entry without this list applies to every name).',
        type: 'array',
        minItems: 1,
        items: { type: 'string', minLength: 1 },
      },
      ruleEntry: {
        description:
          'One setting, or a list of settings tried in order: the first whose methods/tools scope matches applies (e.g. [{ action: off, tools: [run_tests] }, rewrite]).',
        anyOf: [{ $ref: '#/definitions/ruleSetting' }, { type: 'array', minItems: 1, items: { $ref: '#/definitions/ruleSetting' } }],
      },
      ruleSetting: {
        anyOf: [
          { $ref: '#/definitions/action' },
          {
            type: 'object',
            additionalProperties: false,
            properties: {
              action: { $ref: '#/definitions/action' },
              severity: { $ref: '#/definitions/severity' },
              methods: { description: "Apply only to findings on these methods, e.g. ['tools/call'].", $ref: '#/definitions/globs' },
              tools: { description: "Apply only to findings on tools/call of these tools, e.g. ['send_*'].", $ref: '#/definitions/globs' },
            },
          },
        ],
      },
    },
  };
}

/** The schema as it is committed: 2-space JSON and a newline. */
export function policySchemaJson(rules: readonly RuleInfo[]): string {
  return `${JSON.stringify(buildPolicySchema(rules), null, 2)}\n`;
}
