// A real public-key endpoint on loopback (port chosen by the OS), whose answers a test sets.
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export type KeyServerReply = (request: IncomingMessage, response: ServerResponse) => void | Promise<void>;

export interface KeyServer {
  url: string;
  /** How many requests reached the server so far. */
  requests(): number;
  /** Answers `{ success: true, publicKey }` from now on. */
  serveKey(publicKey: string): void;
  /** Answers with `reply` from now on. */
  reply(reply: KeyServerReply): void;
  close(): Promise<void>;
}

export const json = (status: number, body: unknown): KeyServerReply => (_, response) => {
  response.writeHead(status, { 'content-type': 'application/json' }).end(typeof body === 'string' ? body : JSON.stringify(body));
};

export async function startKeyServer(): Promise<KeyServer> {
  let count = 0;
  let current: KeyServerReply = json(503, { success: false, message: 'no key yet' });
  const server = createServer((request, response) => {
    count++;
    void current(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/api/v1/public-key`,
    requests: () => count,
    serveKey: (publicKey) => {
      current = json(200, { success: true, publicKey });
    },
    reply: (reply) => {
      current = reply;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A port that was just open and is now closed: connecting to it is refused. */
export async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/api/v1/public-key`;
}
