import type { paths, WidenOpenEnums } from '@capi/openapi-types';

export type { WidenOpenEnums };

/**
 * The `paths` that {@link PartnerClient.raw} is typed with: `@capi/openapi-types`' `paths`,
 * whose open enums are widened to `string` ({@link WidenOpenEnums}), so that every operation's
 * data, error and body types are usable.
 *
 * @example
 * const raw: Client<RawPaths> = client.raw;
 */
export type RawPaths = paths;
