import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';

/** A running loopback HTTP server. */
export interface RunningServer {
  readonly url: string;
  close(): Promise<void>;
}

/** Serves `listener` on 127.0.0.1 on a port the OS picks. */
export async function listen(listener: RequestListener | Server): Promise<RunningServer> {
  const server = typeof listener === 'function' ? createServer(listener) : listener;
  // fetch keeps connections alive between a test's deliveries; node:http closes one idle for 5 s
  // (keepAliveTimeout), and a delivery sent on it as it closes fails with ECONNRESET: on a loaded
  // machine (a CI run, tests stalled for seconds) that happened between two deliveries of a test.
  // Tests close every connection when they end.
  server.keepAliveTimeout = 120_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** Serves a Web `Request -> Response` function over node:http, the bridge Hono's Node server uses. */
export function listenFetch(fetch: (request: Request) => Response | Promise<Response>): Promise<RunningServer> {
  return listen(getRequestListener(fetch));
}
