import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { requestLogEntry, type RequestLogEntry } from '../log/sandbox-log.js';

type Listener = (request: IncomingMessage, response: ServerResponse) => void;

/**
 * Wraps a node:http listener so that each request, once answered (or abandoned by the
 * client), gives one {@link RequestLogEntry} to `log`. CORS preflights and refusals count:
 * every answer the sandbox gives is a line.
 */
export function logRequests(listener: Listener, log: (entry: RequestLogEntry) => void): Listener {
  return (request, response) => {
    const started = performance.now();
    response.once('close', () => {
      const target = request.url ?? '/';
      const queryStart = target.indexOf('?');
      const path = queryStart === -1 ? target : target.slice(0, queryStart);
      log(requestLogEntry(request.method ?? 'GET', path, response.writableFinished ? response.statusCode : null, performance.now() - started));
    });
    listener(request, response);
  };
}
