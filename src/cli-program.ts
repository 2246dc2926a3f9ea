// The mcp-warden command line: `proxy` runs the proxy, `rules` lists the rules, `demo` shows it on a
// built-in broken server.
// Built by a function so tests (and the README check) can read it without running it.
import { Command, Option } from 'commander';
import { createRequire } from 'node:module';
import { parseDuration, parseListen, parseSize, parseUrl } from './config/cli-options.ts';
import { createProxy } from './server.ts';
import { createLogger } from './sinks/logger.ts';

const { version } = createRequire(import.meta.url)('../package.json') as { version: string };

export function buildProgram(): Command {
  const program = new Command('mcp-warden')
    .description('A reverse proxy that audits MCP servers for the protocol\'s error rules')
    .version(version);

  program
    .command('proxy')
    .description('run the proxy in front of an MCP server')
    .requiredOption('-u, --upstream <url>', 'the MCP server\'s endpoint URL, e.g. http://127.0.0.1:3000/mcp', parseUrl)
    .option('-l, --listen <host:port>', 'address to listen on', parseListen, { host: '127.0.0.1', port: 8787 })
    .option('--path <path>', 'path of the MCP endpoint on the proxy (default: the upstream URL\'s path)')
    .option('--public-url <url>', 'URL clients use to reach the proxy, for OAuth metadata (default: what each client used)', parseUrl)
    .option('--timeout <duration>', 'time the upstream has to send response headers', parseDuration, 60_000)
    .option('--idle-timeout <duration>', 'longest silence inside an upstream response body (0: none)', parseDuration, 300_000)
    .option('--max-body <size>', 'largest request body accepted from a client', parseSize, 4 * 1024 * 1024)
    .option('--audit-limit <size>', 'largest response body parsed; larger ones stream through unaudited', parseSize, 4 * 1024 * 1024)
    .addOption(new Option('--log-level <level>', 'log level').choices(['trace', 'debug', 'info', 'warn', 'error']).default('info'))
    .option('--pretty', 'human-readable logs (default when stdout is a terminal)')
    .option('--no-pretty', 'JSON lines even on a terminal')
    .action(async (opts) => {
      const logger = createLogger({ level: opts.logLevel, pretty: opts.pretty });
      const proxy = createProxy({
        upstream: opts.upstream,
        path: opts.path,
        publicUrl: opts.publicUrl,
        logger,
        limits: {
          upstreamHeadersTimeoutMs: opts.timeout,
          upstreamBodyTimeoutMs: opts.idleTimeout,
          maxRequestBytes: opts.maxBody,
          auditBodyBytes: opts.auditLimit,
        },
      });
      await proxy.listen(opts.listen.port, opts.listen.host);
      const stop = (signal: string) => {
        logger.info({ signal }, 'shutting down');
        proxy.close().then(() => process.exit(0));
      };
      process.once('SIGINT', stop).once('SIGTERM', stop);
    });

  program
    .command('rules')
    .description('list every rule: id, severity, the protocol versions it judges, its group, what it flags')
    .addOption(new Option('--format <format>', 'output format').choices(['text', 'markdown', 'json']).default('text'))
    .action(async (opts: { format: 'text' | 'markdown' | 'json' }) => {
      const { RULES } = await import('./rules/index.ts');
      const { rulesJson, rulesMarkdown, rulesText } = await import('./rules/catalogue.ts');
      const render = { text: rulesText, markdown: rulesMarkdown, json: rulesJson }[opts.format];
      process.stdout.write(`${render(RULES)}\n`);
    });

  program
    .command('demo')
    .description('run a built-in, deliberately broken MCP server behind the proxy and show what the proxy sees')
    .action(async () => {
      const { runDemo } = await import('./demo/run.ts');
      process.exitCode = await runDemo(process.stdout);
    });

  return program;
}
