/**
 * The account export's row of the operation table (openapi/operations.ts spreads it in): all of
 * the account's data as JSON lines, for its owner (GDPR articles 15 and 20).
 */
import { findOperation } from '../domain/operation-spec.ts';
import type { OperationSpec } from '../domain/operation-spec.ts';
import { EXPORT_FORMAT } from './account-export.ts';

export const EXPORT_OPERATIONS: OperationSpec[] = [
  {
    method: 'GET',
    path: '/api/v1/account/export',
    operationId: 'exportAccount',
    summary: 'Everything the account holds, as JSON lines',
    description: `All of the account's data in one download (\`application/x-ndjson\`, a file \`subx-export-<account id>-<date>.jsonl\`), streamed: one JSON object a line, each with a \`type\`. First \`export\` (\`format: ${EXPORT_FORMAT}\`, the account id, when), then \`account\` (tier, balance, created, e-mail), \`key\` per API key (metadata: never a key or its hash), \`webhook_secret\` (whether one exists and its dates: never the secret), \`watch\` per watch, \`job\` per job and \`job_result\` per result still kept, \`usage_day\` per day of the last 90, \`audit_event\` per event of the audit log; last \`end\` with the number of lines before it. An archive without its \`end\` line was cut short: ask again. Only the account's primary key may export it: a named key, even one with every scope, is 403 \`INSUFFICIENT_SCOPE\` (\`primary_key_required: true\`). Recorded in the audit log (\`account.exported\`). Not counted against the daily limit.`,
    auth: 'account',
    scope: 'keys:admin',
    credits: 'none; not counted against the daily limit',
    tag: 'Account',
    mediaType: 'application/x-ndjson',
    response: {
      type: 'string',
      description:
        'Lines of JSON, each with a `type`: `export`, `account`, `key`, `webhook_secret`, `watch`, `job`, `job_result`, `usage_day`, `audit_event`, then `end` (`lines`: how many came before it). docs/api.md, "Export the account\'s data".',
    },
    errors: ['UNAUTHORIZED', 'INSUFFICIENT_SCOPE', 'RATE_LIMITED', 'SERVICE_UNAVAILABLE'],
  },
];

/** The row of one of this wing's operations. */
export function exportOperation(id: string): OperationSpec {
  return findOperation(EXPORT_OPERATIONS, id);
}
