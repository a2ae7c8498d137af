/**
 * Certificates made for a test, never checked in: a CA, a server certificate for `localhost` and
 * 127.0.0.1 signed by it (usable as a client certificate too), a client certificate, and a second,
 * unrelated CA for the "wrong CA" cases. Written as PEM files into a fresh temporary directory
 * (what the services' *_FILE variables read). EC P-256 keys: fast to make on a busy machine.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import selfsigned from 'selfsigned';

export interface TestPki {
  dir: string;
  caFile: string;
  /** The CA's certificate (PEM). */
  ca: string;
  serverCertFile: string;
  serverKeyFile: string;
  serverCert: string;
  serverKey: string;
  clientCertFile: string;
  clientKeyFile: string;
  /** A CA that signed none of the above. */
  otherCaFile: string;
  remove(): void;
}

const DAY_MS = 86_400_000;
const base = () => ({
  keyType: 'ec' as const,
  curve: 'P-256' as const,
  algorithm: 'sha256',
  notBeforeDate: new Date(Date.now() - DAY_MS),
  notAfterDate: new Date(Date.now() + 7 * DAY_MS),
});

async function makeCa(name: string) {
  return selfsigned.generate([{ name: 'commonName', value: name }], {
    ...base(),
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
}

export async function createTestPki(): Promise<TestPki> {
  const dir = mkdtempSync(join(tmpdir(), 'subx-pki-'));
  const ca = await makeCa('subx test CA');
  const other = await makeCa('some other CA');
  const signedBy = { key: ca.private, cert: ca.cert };
  const server = await selfsigned.generate([{ name: 'commonName', value: 'localhost' }], {
    ...base(),
    ca: signedBy,
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true, clientAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
        ],
      },
    ],
  });
  const client = await selfsigned.generate([{ name: 'commonName', value: 'subx-client' }], {
    ...base(),
    ca: signedBy,
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', clientAuth: true },
    ],
  });
  const write = (name: string, pem: string) => {
    const file = join(dir, name);
    writeFileSync(file, pem, { mode: 0o600 });
    return file;
  };
  return {
    dir,
    ca: ca.cert,
    caFile: write('ca.pem', ca.cert),
    serverCert: server.cert,
    serverKey: server.private,
    serverCertFile: write('server.pem', server.cert),
    serverKeyFile: write('server-key.pem', server.private),
    clientCertFile: write('client.pem', client.cert),
    clientKeyFile: write('client-key.pem', client.private),
    otherCaFile: write('other-ca.pem', other.cert),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
