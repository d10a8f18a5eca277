/**
 * Types of the capi partner API, generated from the OpenAPI spec by openapi-typescript,
 * plus a named alias for every schema.
 *
 * @example
 * import createClient from 'openapi-fetch';
 * import type { paths, AccountLimit } from '@capi/openapi-types';
 * const api = createClient<paths>({ baseUrl: 'https://api.example.com' });
 * const { data } = await api.GET('/user-api/user/account/limit');
 * const limit: AccountLimit | undefined = data;
 *
 * @packageDocumentation
 */
import type { operations as generatedOperations, paths as generatedPaths } from './generated/openapi.js';

export type { $defs, components, webhooks } from './generated/openapi.js';
export type * from './generated/schema-aliases.js';

/**
 * `T` with each open string enum (`"a" | "b" | (string & {})`) widened to `string`, deeply.
 *
 * openapi-fetch passes response data through `Readable<>` and request bodies through
 * `Writable<>`, which map every object type; `string & {}` is one, so an open enum came out of
 * a `createClient<paths>()` call as an object of string methods, assignable to nothing (TS2322
 * on `const s: string | undefined = data?.status`). No other type keeps the known values next
 * to `string` (TypeScript folds `"a" | string` to `string`), so `paths` is widened; the named
 * aliases (`OnboardingStatus`) and `components` keep the known values.
 *
 * @example
 * type S = WidenOpenEnums<{ status: 'a' | (string & {}) }>; // { status: string }
 */
export type WidenOpenEnums<T> = T extends string
  ? string extends T
    ? string
    : T
  : T extends object
    ? // Without undefined: an optional `query?: never` stays never (undefined is added back by `?`).
      { [K in keyof T]: WidenOpenEnums<Exclude<T[K], undefined>> }
    : T;

/**
 * Every path and method of the spec, for `createClient<paths>()` (openapi-fetch) or any typed
 * client, with open enums (the onboarding `status`) typed `string` so that openapi-fetch's
 * mapped types leave them usable; compare with the named `OnboardingStatus` for the known values.
 *
 * @example
 * const { data } = await createClient<paths>({ baseUrl }).GET('/user/onboarding');
 * const status: string | undefined = data?.status;
 */
export type paths = WidenOpenEnums<generatedPaths>;

/**
 * Every operation by `operationId`, widened as {@link paths} is (each path's method is its operation).
 *
 * @example
 * type Status = operations['getOnboardingStatus']['responses'][200]['content']['application/json']['status']; // string
 */
export type operations = WidenOpenEnums<generatedOperations>;
