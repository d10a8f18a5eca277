/** The export conditions wrangler gives esbuild (its default, WRANGLER_BUILD_CONDITIONS unset). */
export declare const WRANGLER_CONDITIONS: readonly string[];

/** Bundles a worker's entry module as wrangler does; `inputs` lists every file in the bundle. */
export declare function bundleWorker(entry: string): Promise<{ code: string; inputs: string[] }>;

/** A TCP port free on 127.0.0.1 right now (the OS's choice), for a server a test starts. */
export declare function freePort(): Promise<number>;

/** A workerd process serving one worker on 127.0.0.1. */
export interface RunningWorkerd {
  readonly url: string;
  /** Everything workerd printed so far (stderr and stdout). */
  stderr(): string;
  /**
   * Fires the worker's scheduled handler as a Cron Trigger does (`startWorkerd({ cron: true })`
   * only), with `cron` as `controller.cron` (default `* * * * *`); resolves with workerd's
   * outcome (`ok`, or `exception` when the handler or a `waitUntil` promise threw).
   */
  scheduled(cron?: string): Promise<{ outcome: string; noRetry: boolean }>;
  close(): Promise<void>;
}

/** Starts workerd serving `code` with text bindings and Durable Object namespaces. */
export declare function startWorkerd(options: {
  code: string;
  bindings?: Record<string, string>;
  durableObjects?: { binding: string; className: string }[];
  /** Also serve the worker that fires the main worker's scheduled events (see {@link RunningWorkerd.scheduled}). */
  cron?: boolean;
}): Promise<RunningWorkerd>;
