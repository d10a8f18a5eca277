/**
 * What the receiver needs from a server, one adapter per server kind: the method, a way to
 * read a header and a way to read the raw body. The Web `Request` and Node's
 * `IncomingMessage` are both turned into this, so that the pipeline is one piece of code.
 *
 * @example
 * ```ts
 * const source: DeliverySource = {
 *   method: 'POST',
 *   header: (name) => headers[name],
 *   readRawBody: async () => rawBytes,
 * };
 * const { reply } = await receiver.receive(source);
 * ```
 */
export interface DeliverySource {
  /** The HTTP method, upper case. */
  readonly method: string;
  /** A header by its lower-case name; Node may hand several values as an array. */
  header(name: string): string | readonly string[] | null | undefined;
  /**
   * The raw body bytes. Rejects with `WebhookReceiverError` `body_too_large` as soon as more than
   * `maxBytes` arrive (without reading the rest), or `body_already_consumed`.
   */
  readRawBody(maxBytes: number): Promise<Uint8Array>;
}

/**
 * The reply the receiver wants written: status, headers and a JSON body `{ code, message }`.
 *
 * @example
 * ```ts
 * const { reply } = await receiver.receive(source);
 * res.writeHead(reply.status, reply.headers).end(reply.body);
 * ```
 */
export interface ReceiverReply {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}
