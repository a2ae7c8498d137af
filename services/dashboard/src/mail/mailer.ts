/**
 * Outgoing mail (verification and reset links) through nodemailer. With SMTP_URL: SMTP (STARTTLS or
 * TLS as the URL says). Without: nodemailer's JSON transport, and the launcher prints each message,
 * which is how `npm start` shows the links. Messages are never logged by the mailer itself: the
 * links in them are credentials.
 */
import nodemailer from 'nodemailer';

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  send(mail: Mail): Promise<void>;
  close(): void;
}

export function createMailer(options: {
  smtpUrl: string | undefined;
  from: string;
  timeoutMs: number;
  /** JSON transport only: receives each rendered message (the launcher prints it). */
  onConsoleMail?: (mail: Mail) => void;
}): Mailer {
  const transport = options.smtpUrl
    ? // The URL sets host, port, TLS and credentials; the timeouts bound every SMTP wait.
      nodemailer.createTransport({
        url: options.smtpUrl,
        connectionTimeout: options.timeoutMs,
        greetingTimeout: options.timeoutMs,
        socketTimeout: options.timeoutMs,
      })
    : nodemailer.createTransport({ jsonTransport: true });
  return {
    async send(mail) {
      await transport.sendMail({ from: options.from, ...mail });
      if (!options.smtpUrl) options.onConsoleMail?.(mail);
    },
    close: () => transport.close(),
  };
}
