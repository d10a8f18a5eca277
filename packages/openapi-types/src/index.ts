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
export type { $defs, components, operations, paths, webhooks } from './generated/openapi.js';
export type * from './generated/schema-aliases.js';
