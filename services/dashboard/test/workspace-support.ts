/**
 * Test wiring for workspaces: a dashboard with an owner signed in, and people joining the owner's
 * workspace through the invitation link, as the members page sends it.
 */
import type { WorkspaceRole } from '@subx/contracts/workspaces';
import type { signedInDashboard } from './support.ts';
import { Browserish } from './support.ts';

export const PASSWORD = 'a test passphrase 0123';

/** The `/invitation?token=…` path of the newest invitation mailed to `email`. */
export function invitationPath(dash: Awaited<ReturnType<typeof signedInDashboard>>, email: string): string {
  const link = new URL(dash.mail.link(email, 'invitation'));
  return `${link.pathname}${link.search}`;
}

export const tokenOf = (path: string) => new URL(path, 'http://x').searchParams.get('token')!;

/** The owner invites `email` with `role`; a new person accepts with a password, and is signed in. */
export async function join(
  dash: Awaited<ReturnType<typeof signedInDashboard>>,
  email: string,
  role: WorkspaceRole,
  ip = '198.51.100.8',
): Promise<{ b: Browserish; userId: string }> {
  await dash.b.get('/members');
  const invited = await dash.b.post('/members/invite', { email, role });
  if (invited.statusCode !== 303) throw new Error(`invite answered ${invited.statusCode}`);
  const path = invitationPath(dash, email);
  const b = new Browserish(dash.app, ip);
  await b.get(path);
  const accepted = await b.post('/invitation', { token: tokenOf(path), new_password: PASSWORD });
  if (accepted.statusCode !== 303)
    throw new Error(`accepting answered ${accepted.statusCode}: ${accepted.body}`);
  const user = await dash.store
    .collection<{ _id: string; email: string }>('dashboard_users')
    .findOne({ email });
  return { b, userId: user!._id };
}

/** The dashboard user id of `email`. */
export async function userIdOf(dash: Awaited<ReturnType<typeof signedInDashboard>>, email: string) {
  const user = await dash.store
    .collection<{ _id: string; email: string }>('dashboard_users')
    .findOne({ email });
  return user!._id;
}

export const noticeOf = (body: string) =>
  /<p class="notice (ok|error)"[^>]*>([^<]*)<\/p>/.exec(body)?.slice(1, 3);
