/**
 * Mailing a one-time link (confirm the address, reset the password): a few mails of each kind per
 * address (abuse-limits.ts), the link built from the configured public URL, the page answering the
 * same whether a mail went out or not.
 */
import type { AbuseLimits } from './abuse-limits.ts';
import type { Mailer } from './mailer.ts';
import type { LinkPurpose, OneTimeLinks } from './one-time-links.ts';
import type { UserDoc } from './users.ts';

export type SendLink = (user: UserDoc, purpose: LinkPurpose, replacing?: boolean) => Promise<void>;

export function createLinkMailer(deps: {
  limits: AbuseLimits;
  links: OneTimeLinks;
  mailer: Mailer;
  publicUrl: () => string;
}): SendLink {
  return async (user, purpose, replacing = false) => {
    if (!(await deps.limits.mayMail(purpose, user.email, { replacing }))) return;
    const token = await deps.links.issue(purpose, user._id);
    const url = `${deps.publicUrl()}/${purpose}?token=${token}`;
    const mail =
      purpose === 'verify'
        ? {
            subject: 'Confirm your email for subx',
            text: `Open this link to confirm your email address and start using the subx API:\n\n${url}\n\nThe link works once, for 24 hours. If you did not sign up, ignore this mail.`,
          }
        : {
            subject: 'Reset your subx password',
            text: `Open this link to choose a new password:\n\n${url}\n\nThe link works once, for 1 hour. If you did not ask for it, ignore this mail.`,
          };
    await deps.mailer.send({ to: user.email, ...mail });
  };
}
