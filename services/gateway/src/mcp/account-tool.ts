/** get_account: GET /api/v1/account, the key's standing, for an agent budgeting before it spends. */
import { operationById } from '../openapi/operations.ts';
import { isOk, ok, toolError } from './tool-kit.ts';
import type { Body, ToolDefinition } from './tool-kit.ts';

const limitText = (n: number | null) => (n === null ? 'unlimited' : n.toLocaleString('en'));

export const getAccountTool: ToolDefinition = {
  name: 'get_account',
  spends: false,
  openWorld: false,
  operationId: 'getAccount',
  title: 'Get the account’s balance and limits',
  lead: 'The calling key’s tier, credit balance, requests used today against the daily limit (and when it resets), the operations the tier may call and its job limits: check it before a costly call or a job.',
  fields: [],
  outputSchema: operationById('getAccount').response,
  async run(_args, call, spec) {
    const answer = await call({ spec });
    if (!isOk(answer)) return toolError(answer);
    const b = answer.body as Body;
    const operations = Object.entries(b.operations as Record<string, Body>);
    const denied = operations.filter(([, o]) => !o.allowed).map(([name, o]) => `${name} (${o.minimum_tier})`);
    const lines = [
      `Tier **${b.tier}**: ${Number(b.credits_balance).toLocaleString('en')} credits available.`,
      `Requests today: ${Number(b.daily_used).toLocaleString('en')} of ${limitText(b.daily_limit)}, ${limitText(b.daily_remaining)} left; the count resets at ${b.resets_at}.`,
      b.jobs.max_items > 0
        ? `Bulk jobs: up to ${Number(b.jobs.max_items).toLocaleString('en')} items each, ${b.jobs.max_queued} waiting at once.`
        : 'Bulk jobs: not in this tier.',
      denied.length > 0
        ? `Needs a higher tier: ${denied.join(', ')}.`
        : 'Every operation is open to this tier.',
    ];
    return ok(lines.join('\n'), b);
  },
};
