/**
 * Mailing a one-time link (confirm the address, reset the password): a few mails of each kind per
 * address (abuse-limits.ts), the link built from the configured public URL, the page answering the
 * same whether a mail went out or not.
 *
 * The mail itself leaves in the background: the page must not take longer when an account exists
 * (an SMTP round trip is the one step a caller could time), so sendLink returns once the link is
 * issued, and `drain()` (on close) waits for what is still on its way, within the mailer's timeouts.
 */
import type { Logger } from '@subx/ports';
import type { AbuseLimits } from '../auth/abuse-limits.ts';
import type { Mailer } from './mailer.ts';
import type { LinkPurpose, OneTimeLinks } from '../auth/one-time-links.ts';
import type { UserDoc } from '../auth/users.ts';

/**
 * - `verify`: confirm the address just signed up with;
 * - `contested`: someone signed up again with an address whose confirmation is pending: the owner
 *   gets a fresh confirmation link that lets them choose their own password;
 * - `reset`: choose a new password;
 * - `delete-workspace`: confirm, from the mailbox, the deletion of the workspace asked for in the
 *   dashboard.
 */
type LinkMailKind = 'verify' | 'contested' | 'reset' | 'delete-workspace';

export interface SendLink {
  (user: UserDoc, kind: LinkMailKind, options?: { replacing?: boolean }): Promise<void>;
  /** Waits for the mails still being handed to the mail server. */
  drain(): Promise<void>;
  /**
   * An invitation to a workspace: the link (`/invitation?token=…`) goes to the invited address,
   * in the background as the other links do; the token is the invitation's own (invitations.ts).
   */
  invitation(to: string, token: string, role: string, invitedBy: string): void;
}

const PURPOSE: Record<LinkMailKind, LinkPurpose> = {
  verify: 'verify',
  contested: 'verify',
  reset: 'reset',
  'delete-workspace': 'delete-workspace',
};

function mailText(kind: LinkMailKind, url: string) {
  switch (kind) {
    case 'verify':
      return {
        subject: 'Confirm your email for subx',
        text: `Open this link to confirm your email address and start using the subx API:\n\n${url}\n\nYou will be asked for the password you signed up with, or can choose a new one. The link works once, for 24 hours. If you did not sign up, ignore this mail.`,
      };
    case 'contested':
      return {
        subject: 'Someone is signing up for subx with your address',
        text: `Someone (perhaps you) tried to sign up for subx with this address, which is not confirmed yet.\n\nIf it was you, or to keep the address for yourself, open this link and choose your own password:\n\n${url}\n\nAny password chosen by someone else stops working then. The link works once, for 24 hours. If you do not want a subx account, ignore this mail: nobody can confirm the address without it.`,
      };
    case 'reset':
      return {
        subject: 'Reset your subx password',
        text: `Open this link to choose a new password:\n\n${url}\n\nThe link works once, for 1 hour. Choosing a new password signs out every session and replaces your API key. If you did not ask for it, ignore this mail.`,
      };
    case 'delete-workspace':
      return {
        subject: 'Confirm the deletion of your subx workspace',
        text: `You asked to delete your subx workspace. Open this link, signed in, and confirm:\n\n${url}\n\nDeleting it revokes every API key at once and removes its jobs, results, watches, webhook secrets and audit log; it cannot be undone. Download its export first if you want to keep anything. The link works once, for 30 minutes. If you did not ask for it, ignore this mail and change your password.`,
      };
  }
}

export function createLinkMailer(deps: {
  limits: AbuseLimits;
  links: OneTimeLinks;
  mailer: Mailer;
  publicUrl: () => string;
  logger: Logger;
}): SendLink {
  const inFlight = new Set<Promise<void>>();
  const sendLink = async (user: UserDoc, kind: LinkMailKind, options: { replacing?: boolean } = {}) => {
    const purpose = PURPOSE[kind];
    if (!(await deps.limits.mayMail(purpose, user.email, options))) return;
    const token = await deps.links.issue(purpose, user._id);
    const url = `${deps.publicUrl()}/${purpose}?token=${token}`;
    // Only the kind goes to the log: the address is personal data and the link a credential.
    const sending = deps.mailer
      .send({ to: user.email, ...mailText(kind, url) })
      .catch((err: unknown) =>
        deps.logger.error(
          { err: err instanceof Error ? err.message : String(err), kind },
          'link mail failed',
        ),
      )
      .finally(() => inFlight.delete(sending));
    inFlight.add(sending);
  };
  const invitation = (to: string, token: string, role: string, invitedBy: string) => {
    const url = `${deps.publicUrl()}/invitation?token=${token}`;
    const sending = deps.mailer
      .send({
        to,
        subject: 'You are invited to a subx workspace',
        text: `${invitedBy} invites you to their subx workspace as ${role}.\n\nOpen this link to join:\n\n${url}\n\nIf you have no subx account yet, you choose a password there. The link works once, for 7 days. If you do not know the sender, ignore this mail.`,
      })
      .catch((err: unknown) =>
        deps.logger.error(
          { err: err instanceof Error ? err.message : String(err), kind: 'invitation' },
          'link mail failed',
        ),
      )
      .finally(() => inFlight.delete(sending));
    inFlight.add(sending);
  };
  return Object.assign(sendLink, {
    invitation,
    async drain() {
      await Promise.allSettled([...inFlight]);
    },
  });
}
