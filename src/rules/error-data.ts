// The `data` an error's schema requires: -32022 {supported, requested}, -32021
// {requiredCapabilities}, -32042 {elicitations}.
import { isDefinedFor, definitionOf } from './code-ranges.ts';
import { asRecord } from '../codec/json-value.ts';
import { excerpt } from '../redact/excerpt.ts';
import { pointer } from '../codec/json-pointer.ts';
import { codeRule } from './error-answers.ts';
import { metaVersion } from './read.ts';
import type { ExchangeRule, Report } from './types.ts';
import { where } from './versions.ts';

const isStringArray = (v: unknown): boolean => Array.isArray(v) && v.every((x) => typeof x === 'string');

/** The codes whose schema requires data, each judged below. */
const WITH_DATA = [-32022, -32021, -32042];

export const errorDataRequired: ExchangeRule = codeRule(
  {
    id: 'error-data-required',
    group: 'codes',
    severity: 'error',
    versions: where((v) => v.codes.some((c) => WITH_DATA.includes(c))),
    summary:
      'An error whose schema requires data without it: -32022 {supported, requested}, -32021 {requiredCapabilities}, -32042 {elicitations}',
    source:
      'https://modelcontextprotocol.io/specification/2026-07-28/schema#unsupportedprotocolversionerror, https://modelcontextprotocol.io/specification/2026-07-28/schema#missingrequiredclientcapabilityerror, https://modelcontextprotocol.io/specification/2025-11-25/client/elicitation#url-elicitation-required-error',
  },
  (s, e, code) => {
    if (s.version === undefined || !isDefinedFor(code, s.version)) return [];
    const data = asRecord(e.data);
    const out: Report[] = [];
    const lacks = (field: string, want: string, example: string): void => {
      out.push({
        message: `${code} (${definitionOf(code)?.name}) lacks data.${field} (${want})`,
        pointer: data ? pointer('response', 'error', 'data', field) : '/response/error/data',
        evidence: excerpt(e.data === undefined ? e.value.error : e.data),
        fix: `include data.${field}: ${example}`,
      });
    };
    if (code === -32022) {
      if (!isStringArray(data?.supported))
        lacks('supported', 'an array of version strings', 'the versions the server supports, e.g. ["2026-07-28"]');
      if (typeof data?.requested !== 'string') {
        const requested = metaVersion(s.request.params);
        lacks('requested', 'a string', `the version the client asked for${requested !== undefined ? `, "${excerpt(requested, 40)}"` : ''}`);
      }
    } else if (code === -32021) {
      if (!asRecord(data?.requiredCapabilities))
        lacks(
          'requiredCapabilities',
          'a ClientCapabilities object',
          'the client capabilities the request needs, e.g. { "elicitation": {} }',
        );
    } else if (code === -32042) {
      const list = data?.elicitations;
      if (!Array.isArray(list))
        lacks('elicitations', 'an array of URL elicitation params', '[{ mode: "url", elicitationId, url, message }]');
      else {
        const bad = list.findIndex((x) => typeof asRecord(x)?.elicitationId !== 'string');
        if (bad >= 0) {
          out.push({
            message: `-32042 (URL elicitation required) lists an elicitation without an elicitationId`,
            pointer: pointer('response', 'error', 'data', 'elicitations', bad),
            evidence: excerpt(list[bad]),
            fix: 'give every entry of data.elicitations the URL-mode params: mode "url", elicitationId, url, message',
          });
        }
      }
    }
    return out;
  },
);
