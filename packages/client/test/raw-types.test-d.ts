import { describe, expectTypeOf, test } from 'vitest';
import type { Client } from 'openapi-fetch';
import type { HttpMethod, Readable, Writable } from 'openapi-typescript-helpers';
import type { components, OnboardingStatus, paths } from '@capi/openapi-types';
import { createPartnerClient, type PartnerClient, type RawPaths } from '../src/index.js';

// Every operation of the spec: [path, method] pairs with an operation object.
type Operation<P extends keyof RawPaths, M> = M extends HttpMethod ? (RawPaths[P] extends Record<M, infer O> ? ([O] extends [never] | [undefined] ? never : O) : never) : never;
type Operations = { [P in keyof RawPaths]: { [M in HttpMethod]: Operation<P, M> }[HttpMethod] }[keyof RawPaths];

// What openapi-fetch hands out or takes: each response body through Readable, each request body through Writable.
type ResponseBodies<O> = O extends { responses: infer R } ? { [S in keyof R]: R[S] extends { content: infer C } ? C[keyof C] : never }[keyof R] : never;
type RequestBodies<O> = O extends { requestBody?: { content: infer C } } ? C[keyof C] : never;
type Mangled<T> = T extends unknown ? ([T] extends [Readable<T>] ? ([Readable<T>] extends [T] ? never : T) : T) : never;
type MangledBody<T> = T extends unknown ? ([T] extends [Writable<T>] ? ([Writable<T>] extends [T] ? never : T) : T) : never;

describe('raw: usable types for every operation', () => {
  test('Readable/Writable leave every response and request body of every operation unchanged', () => {
    expectTypeOf<Operations>().not.toBeNever();
    expectTypeOf<RawPaths['/user/onboarding']['get']>().toExtend<Operations>();
    expectTypeOf<RawPaths['/user-api/user/account/limit']['put']>().toExtend<Operations>();
    // A mapped open enum (an object of string methods) would show up here as a surviving body type.
    expectTypeOf<Mangled<ResponseBodies<Operations>>>().toBeNever();
    expectTypeOf<MangledBody<RequestBodies<Operations>>>().toBeNever();
  });

  test('the open enum with its known values (the named schema) would fail this check (it is not vacuous)', () => {
    expectTypeOf<Mangled<components['schemas']['OnboardingStatusResponse']>>().not.toBeNever();
    // RawPaths is @capi/openapi-types' paths, widened there.
    expectTypeOf<RawPaths>().toEqualTypeOf<paths>();
  });

  test('GET /user/onboarding: data.status is a string', async () => {
    const client: PartnerClient = createPartnerClient({ baseUrl: 'http://127.0.0.1:1' });
    expectTypeOf(client.raw).toEqualTypeOf<Client<RawPaths>>();
    const { data } = await client.raw.GET('/user/onboarding');
    const s: string | undefined = data?.status;
    expectTypeOf(s).toEqualTypeOf<string | undefined>();
    expectTypeOf(data).toEqualTypeOf<RawPaths['/user/onboarding']['get']['responses'][200]['content']['application/json'] | undefined>();
    // The typed alias keeps its known values for completion and narrowing.
    expectTypeOf<'action_accept_tos'>().toExtend<OnboardingStatus>();
  });
});
