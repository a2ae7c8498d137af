import { readFileSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { MAX_CLIENTS_FILE_BYTES, parseClientIdentities, type ClientIdentities } from '../config.ts';
import type { Logger } from '../types.ts';

/**
 * Client identities as hot configuration. The platform retires client versions overnight; with
 * identities in a file (a ConfigMap mounted into the pod), rolling a new version out is an edit of
 * that file, picked up here within `intervalMs`, with no restart and no lost in-flight work.
 *
 * The file is read again on a timer rather than watched: a ConfigMap update swaps a symlink
 * (`..data`), which `fs.watch` misses on some filesystems, and a timer also covers network mounts.
 * A change that does not parse or names unknown clients is refused with one log line listing every
 * problem, and the identities in use stay; so does a file that is briefly missing mid-swap.
 */
export interface ClientsFileOptions {
  path: string;
  intervalMs: number;
  /** Whether a PO-token provider is configured (WEB-family clients on the ladder need one). */
  poTokenProvider: boolean;
  /** Called with every valid change (not with the content already in use). */
  apply: (identities: ClientIdentities) => void;
  logger?: Logger | undefined;
}

export class ClientsFile {
  readonly #options: ClientsFileOptions;
  #timer: NodeJS.Timeout | undefined;
  /** The content last seen (applied or refused), so an unchanged file costs one read and no parse. */
  #seen: string | undefined;
  #reading: Promise<void> | undefined;

  constructor(options: ClientsFileOptions, initialContent?: string) {
    this.#options = options;
    this.#seen = initialContent;
  }

  start(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => void this.check(), this.#options.intervalMs);
    // never keeps a process alive on its own
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Reads the file once and applies a valid change (the timer calls this; tests call it directly). */
  check(): Promise<void> {
    this.#reading ??= this.#read().finally(() => (this.#reading = undefined));
    return this.#reading;
  }

  async #read(): Promise<void> {
    const { path, logger } = this.#options;
    let raw: string;
    try {
      if ((await stat(path)).size > MAX_CLIENTS_FILE_BYTES) {
        this.#refuse(`the file is larger than ${MAX_CLIENTS_FILE_BYTES} bytes`, undefined);
        return;
      }
      raw = await readFile(path, 'utf8');
    } catch (err) {
      logger?.warn(
        { file: path, code: (err as NodeJS.ErrnoException).code },
        'client identities file unreadable; keeping the identities in use',
      );
      return;
    }
    if (raw === this.#seen) return;
    const { identities, errors } = parseClientIdentities(raw, this.#options.poTokenProvider, 'the file');
    if (errors.length > 0) {
      this.#refuse(errors.join('; '), raw);
      return;
    }
    this.#seen = raw;
    this.#options.apply(identities);
    logger?.info(
      {
        file: path,
        order: identities.captionClients,
        web: identities.webClient,
        versions: Object.fromEntries(
          identities.captionClients.map((n) => [n, identities.clients[n]?.version]),
        ),
      },
      'client identities reloaded from the file',
    );
  }

  #refuse(problems: string, raw: string | undefined): void {
    if (raw !== undefined) this.#seen = raw;
    (this.#options.logger?.error ?? this.#options.logger?.warn)?.call(
      this.#options.logger,
      { file: this.#options.path, problems },
      'client identities file refused; keeping the identities in use',
    );
  }
}

/**
 * The file's content when the client starts (the configuration was just loaded from it), so the
 * first check does not announce a reload of what is already in use.
 */
export function readInitialIdentities(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}
