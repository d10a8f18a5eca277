import { createConnection, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A TCP gate between one Redis client and the redis-server: the test decides when that client
 * gets through. Open, it forwards every connection at once. Holding, it accepts new connections
 * and keeps what the client sends (its handshake, and then every command it had queued) until
 * `open()`, so that a client reconnecting after an outage reaches Redis exactly when the test
 * says, and the order in which several clients' queued commands reach Redis is the test's, not
 * the reconnect timers'. An accepted connection is not a refused one: the client counts no
 * failed reconnect attempt (ioredis's `maxRetriesPerRequest` does not flush its queue).
 */
export interface RedisGate {
  /** The port to give the client instead of Redis's. */
  readonly port: number;
  /** From now on, new connections wait (connected, nothing forwarded) until `open()`. */
  hold(): void;
  /** Forwards the waiting connections, in the order they came, with what they sent meanwhile; and any new one at once. */
  open(): void;
  close(): Promise<void>;
}

export async function startRedisGate(redisPort: number): Promise<RedisGate> {
  let holding = false;
  const sockets = new Set<Socket>();
  const waiting: Array<{ socket: Socket; chunks: Buffer[]; keep: (chunk: Buffer) => void }> = [];
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  };
  const forward = (socket: Socket, sentMeanwhile: Buffer[]): void => {
    const upstream = createConnection({ port: redisPort, host: '127.0.0.1' });
    track(upstream);
    upstream.on('close', () => socket.destroy());
    socket.on('close', () => upstream.destroy());
    // Written before the pipe's own writes, and buffered by the socket until it connects.
    for (const chunk of sentMeanwhile) upstream.write(chunk);
    socket.pipe(upstream);
    upstream.pipe(socket);
  };
  const server: Server = createServer((socket) => {
    track(socket);
    if (!holding) {
      forward(socket, []);
      return;
    }
    const entry = { socket, chunks: [] as Buffer[], keep: (chunk: Buffer) => { entry.chunks.push(chunk); } };
    socket.on('data', entry.keep);
    waiting.push(entry);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    hold() {
      holding = true;
    },
    open() {
      holding = false;
      for (const { socket, chunks, keep } of waiting.splice(0)) {
        if (socket.destroyed) continue;
        socket.off('data', keep);
        forward(socket, chunks);
      }
    },
    close: () => new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    }),
  };
}
