import { readFile } from 'node:fs/promises';
import { MAX_NESTING_DEPTH, nestsDeeperThan } from '../conformance/nesting-depth.js';
import { DEFAULT_DELIVERY_TIMEOUT_MS } from '../webhooks/delivery-scheduler.js';
import { eventProblems, unknownEventFields, unknownEventFieldsMessage } from '../webhooks/event-conformance.js';
import { eventMismatchMessage, eventTypeSuggestion, MAX_EVENT_TYPE_LENGTH, parseEndpointUrl } from '../webhooks/event-publisher.js';
import { postWebhook } from '../webhooks/post-webhook.js';
import { describeAttemptAnswer } from '../webhooks/receiver-answer.js';
import { sampleEventData, SANDBOX_EVENT_TYPES } from '../webhooks/sample-event-data.js';
import { createWebhookSigner } from '../webhooks/webhook-signer.js';
import { CliUsageError } from './cli-usage-error.js';
import { parseCommandLine } from './parse-command-line.js';
import type { CliStreams } from './run-cli.js';
import { expandSandboxFlag, parseSandboxUrl, sendEventThroughSandbox } from './send-through-sandbox.js';

/** How send-event spells the opt-ins in refusals. */
const CLI_SPELLING = { optIn: '--allow-unknown-fields', unknownKind: 'use --unknown-event-type' };

async function readFlagFile(flag: string, path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw new CliUsageError(`Cannot read the --${flag} file ${path}: ${(error as Error).message}.`);
  }
}

/**
 * `capi-sandbox send-event TYPE --to URL`: signs one event and POSTs it once, like
 * `stripe trigger`. Exit code 0 when the receiver answers 2xx, 1 otherwise.
 * With `--sandbox [URL]`, a running sandbox signs it with its key and delivers it instead.
 * The checks are those of `POST /__sandbox/events`: `--unknown-event-type` is its
 * `unknownEventType` (a kind the SDK does not know, data unchecked), `--allow-unknown-fields`
 * its `allowUnknownFields` (a known kind's data with fields its schema does not define),
 * `--unchecked` its `unchecked` (a known kind's data not checked at all: schema drift).
 */
export async function runSendEvent(args: string[], { out, err }: CliStreams): Promise<number> {
  const { values, positionals } = parseCommandLine(
    'send-event',
    expandSandboxFlag(args),
    {
      to: { type: 'string', multiple: true },
      data: { type: 'string' },
      'private-key': { type: 'string' },
      sandbox: { type: 'string' },
      'user-id': { type: 'string' },
      'unknown-event-type': { type: 'boolean' },
      'allow-unknown-fields': { type: 'boolean' },
      unchecked: { type: 'boolean' },
      duplicate: { type: 'boolean' },
    },
    true,
  );
  const unknownEventType = values['unknown-event-type'] === true;
  const allowUnknownFields = values['allow-unknown-fields'] === true;
  const unchecked = values.unchecked === true;
  const [eventType, ...extra] = positionals;
  if (eventType === undefined || extra.length > 0) throw new CliUsageError('send-event takes exactly one event TYPE, e.g. "send-event user.created --to http://localhost:3000/webhooks".');
  const knownEventType = (SANDBOX_EVENT_TYPES as readonly string[]).includes(eventType);
  if (unknownEventType) {
    if (knownEventType) throw new CliUsageError(`${eventType} is an event kind the SDK knows; leave out --unknown-event-type, so that its data is checked against its schema.`);
    if (eventType.length > MAX_EVENT_TYPE_LENGTH) throw new CliUsageError(`The event TYPE must have 1 to ${MAX_EVENT_TYPE_LENGTH} characters, such as "card.statement.created".`);
    if (values['user-id'] !== undefined) throw new CliUsageError('--user-id picks the data of a known event kind; an unknown kind sends the --data you give (default {}).');
  } else if (!knownEventType) {
    // A near miss of a known kind is a typo (as POST /__sandbox/events answers it): say which.
    const suggestion = eventTypeSuggestion(eventType);
    throw new CliUsageError(
      `Unknown event type "${eventType}"; use one of ${SANDBOX_EVENT_TYPES.join(', ')}.` +
        (suggestion !== ''
          ? suggestion
          : ' To send a kind the SDK does not know (reference 6.1: other kinds are not shown; receivers should acknowledge them with a 2xx and ignore them), add --unknown-event-type.'),
    );
  }
  const to = values.to ?? [];
  const urls = to.map((value) => {
    try {
      return parseEndpointUrl(value);
    } catch (error) {
      throw new CliUsageError(`--to: ${(error as Error).message}`);
    }
  });
  const sandboxUrl = values.sandbox === undefined ? undefined : parseSandboxUrl(values.sandbox);
  if (sandboxUrl === undefined) {
    if (to.length !== 1) {
      throw new CliUsageError(
        to.length === 0
          ? 'send-event needs --to URL, the receiver to POST the event to (or --sandbox, to have a running sandbox deliver it to its webhook endpoints).'
          : 'send-event without --sandbox POSTs to one --to URL; add --sandbox to have a running sandbox deliver it to several.',
      );
    }
    if (values['user-id'] !== undefined) throw new CliUsageError('--user-id names a user of a running sandbox: add --sandbox [URL].');
    if (values.duplicate === true) throw new CliUsageError('--duplicate has a running sandbox send the event twice, as the service may: add --sandbox [URL].');
  } else {
    if (values['private-key'] !== undefined) {
      throw new CliUsageError('--private-key and --sandbox exclude each other: with --sandbox the sandbox signs with its own key (the one its webhooks URL serves).');
    }
    if (values['user-id'] !== undefined && values.data !== undefined) throw new CliUsageError('Give --data FILE or --user-id ID, not both.');
  }
  // Through a sandbox, the event carries the sandbox's own first user unless told otherwise
  // (an unknown kind: {}, as POST /__sandbox/events sends it).
  let data: unknown = sandboxUrl !== undefined ? undefined : unknownEventType ? {} : sampleEventData(eventType);
  if (values.data !== undefined) {
    try {
      data = JSON.parse(await readFlagFile('data', values.data));
    } catch (error) {
      if (error instanceof CliUsageError) throw error;
      throw new CliUsageError(`The --data file ${values.data} is not JSON: ${(error as Error).message}.`);
    }
  }
  if (data !== undefined) {
    if (nestsDeeperThan(data)) {
      throw new CliUsageError(`The --data file ${values.data} nests values more than ${MAX_NESTING_DEPTH} levels deep; give the data the ${eventType} event's schema describes.`);
    }
    if (unknownEventType || unchecked) {
      // Reference 4.6: the body is {eventType, data}; what data holds is not checked.
      if (typeof data !== 'object' || data === null || Array.isArray(data)) {
        throw new CliUsageError(`The ${eventType} event's data must be a JSON object (reference 4.6: the body is {eventType, data}); got ${Array.isArray(data) ? 'an array' : JSON.stringify(data)} in ${values.data}.`);
      }
    } else {
      const problems = eventProblems({ eventType, data });
      if (problems.length > 0) throw new CliUsageError(eventMismatchMessage(eventType, problems, '--unchecked'));
      const unknownFields = allowUnknownFields ? [] : unknownEventFields({ eventType, data });
      if (unknownFields.length > 0) throw new CliUsageError(unknownEventFieldsMessage(eventType, unknownFields, CLI_SPELLING));
    }
  }
  if (sandboxUrl !== undefined) {
    return sendEventThroughSandbox(
      {
        sandboxUrl,
        eventType,
        to: urls.map((url) => url.href),
        data,
        ...(values['user-id'] !== undefined ? { userId: values['user-id'] } : {}),
        ...(unknownEventType ? { unknownEventType } : {}),
        ...(allowUnknownFields ? { allowUnknownFields } : {}),
        ...(unchecked ? { unchecked } : {}),
        ...(values.duplicate === true ? { duplicate: true } : {}),
      },
      { out, err },
    );
  }
  const url = urls[0]!;
  const event = { eventType, data };
  const privateKeyPem = values['private-key'] === undefined ? undefined : await readFlagFile('private-key', values['private-key']);
  let signer;
  try {
    signer = await createWebhookSigner(privateKeyPem);
  } catch (error) {
    throw new CliUsageError(`--private-key must be a PKCS8 PEM Ed25519 private key (openssl genpkey -algorithm ed25519): ${(error as Error).message}.`);
  }
  if (privateKeyPem === undefined) {
    err.write(
      `Signed with a fresh key; its public key (PEM SPKI):\n${signer.publicKey.trimEnd()}\n` +
        '(A receiver that trusts a running sandbox\'s key refuses it: add --sandbox to have the sandbox sign and deliver it.)\n',
    );
  }
  const rawBody = JSON.stringify(event);
  const signed = await signer.sign(rawBody);
  const result = await postWebhook(url, rawBody, signed.headers, DEFAULT_DELIVERY_TIMEOUT_MS, new AbortController().signal);
  out.write(`${eventType} -> ${url.href}: ${describeAttemptAnswer(result)}\n`);
  return result.outcome === 'succeeded' ? 0 : 1;
}
