import type { BufferedAnswer } from './transport.js';

let decoder: TextDecoder | undefined;

/**
 * The body of an answer as text (UTF-8).
 *
 * @example
 * const nonce = readAnswerText(answer).trim();
 */
export function readAnswerText(answer: BufferedAnswer): string {
  if (answer.body === null) return '';
  if (typeof answer.body === 'string') return answer.body;
  decoder ??= new TextDecoder();
  return decoder.decode(answer.body);
}

/**
 * The body of an answer parsed as JSON, or its text when it is not JSON (error bodies of the
 * service are sometimes plain text), or `undefined` when empty.
 *
 * @example
 * const body = readAnswerBody(answer);
 */
export function readAnswerBody(answer: BufferedAnswer): unknown {
  const text = readAnswerText(answer);
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * Whether the answer has a 2xx status.
 *
 * @example
 * if (!isSuccess(answer)) throw errorFromResponse(answer, readAnswerBody(answer));
 */
export function isSuccess(answer: BufferedAnswer): boolean {
  return answer.status >= 200 && answer.status < 300;
}
