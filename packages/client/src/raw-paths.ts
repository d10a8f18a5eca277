import type { paths } from '@capi/openapi-types';

/**
 * `T` with each open string enum (`"a" | "b" | (string & {})`) widened to `string`, deeply.
 *
 * openapi-fetch passes response data through `Readable<>` and request bodies through
 * `Writable<>`, which map every object type; `string & {}` is one, so an open enum came out of
 * `raw` as an object of string methods, assignable to nothing (TS2322 on
 * `const s: string | undefined = data?.status`). No other type keeps the known values next to
 * `string` (TypeScript folds `"a" | string` to `string`), so `raw` widens them; the typed
 * methods keep the generated open enums with their known values.
 *
 * @example
 * type S = WidenOpenEnums<{ status: 'a' | (string & {}) }>; // { status: string }
 */
export type WidenOpenEnums<T> = T extends string
  ? string extends T
    ? string
    : T
  : T extends object
    ? { [K in keyof T]: WidenOpenEnums<T[K]> }
    : T;

/**
 * The `paths` that {@link PartnerClient.raw} is typed with: the generated `paths` with open
 * enums widened to `string`, so every operation's data, error and body types are usable.
 *
 * @example
 * const raw: Client<RawPaths> = client.raw;
 */
export type RawPaths = WidenOpenEnums<paths>;
