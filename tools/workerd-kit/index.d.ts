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
  close(): Promise<void>;
}

/** Starts workerd serving `code` with text bindings and Durable Object namespaces. */
export declare function startWorkerd(options: {
  code: string;
  bindings?: Record<string, string>;
  durableObjects?: { binding: string; className: string }[];
}): Promise<RunningWorkerd>;
