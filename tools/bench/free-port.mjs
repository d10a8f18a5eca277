// A TCP port on loopback that the OS chose and that was free a moment ago, for a server this
// kit starts (redis-server, PostgreSQL).
import { createServer } from 'node:net';

/** @returns {Promise<number>} */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
      server.close(() => resolve(port));
    });
  });
}
