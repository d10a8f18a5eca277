// The reference's tables (partner-interface.md sections 2, 3.1, 4, 6, 8 and 9) transcribed as
// data and checked against the specs, so that any drift between the two fails here.
import { describe, expect, it } from 'vitest';
import { readSpecOutputs, refTitle, type JsonObject } from './support/spec-outputs';

const { openapi, asyncapi, schemas } = await readSpecOutputs();

// ---- Section 2: resources and their fields -------------------------------------------
// type: a JSON type, `enum:<Schema>`, `object:<Schema>` or `array:<Schema>`.
type FieldRow = [field: string, type: string, nullable: boolean, required: boolean];

const RESOURCE_TABLES: Record<string, FieldRow[]> = {
  // 2.1: all fields always present.
  User: [
    ['id', 'string', false, true],
    ['email', 'string', true, true],
    ['phone', 'string', true, true],
    ['firstName', 'string', true, true],
    ['lastName', 'string', true, true],
    ['address1', 'string', true, true],
    ['address2', 'string', true, true],
    ['city', 'string', true, true],
    ['postalCode', 'string', true, true],
    ['state', 'string', true, true],
    ['country', 'string', true, true],
    ['nationalityCountry', 'string', true, true],
    ['signInWallets', 'array:SignInWallet', false, true],
    ['smartWallets', 'array:SmartWallet', false, true],
    ['kycStatus', 'enum:KycStatus', false, true],
    ['availableFeatures', 'object:AvailableFeatures', false, true],
    ['cards', 'array:Card', false, true],
    ['bankingDetails', 'object:BankingDetails', true, true],
    ['isSourceOfFundsAnswered', 'boolean', false, true],
    ['isPhoneValidated', 'boolean', false, true],
  ],
  // 2.2
  SignInWallet: [['address', 'string', false, true]],
  // 2.3
  SmartWallet: [
    ['address', 'string', false, true],
    ['chainId', 'string', false, true],
  ],
  Card: [
    ['id', 'string', false, true],
    ['cardToken', 'string', false, true],
    ['lastFourDigits', 'string', false, true],
    ['embossedName', 'string', true, true],
    ['activatedAt', 'string', true, true],
    ['virtual', 'boolean', false, true],
  ],
  // 2.4: when present, all four fields are present.
  BankingDetails: [
    ['providerIban', 'string', true, true],
    ['providerBic', 'string', true, true],
    ['providerIbanStatus', 'string', true, true],
    ['address', 'string', true, true],
  ],
  // 2.6
  AvailableFeatures: [['providerIban', 'boolean', false, true]],
  // 2.7 and 4.3: whether `currency` is returned is not shown, so it is optional.
  AccountLimit: [
    ['amount', 'integer', false, true],
    ['currency', 'string', false, false],
    ['syncStatus', 'enum:SyncStatus', false, true],
  ],
  // 2.8
  WebhookPublicKey: [
    ['success', 'boolean', false, true],
    ['publicKey', 'string', false, true],
  ],
  // 4.2: the request body.
  SiweChallengeRequest: [
    ['message', 'string', false, true],
    ['signature', 'string', false, true],
    ['ttlInSeconds', 'integer', false, true],
  ],
  // 4.4: the request body.
  SetAccountLimitRequest: [
    ['amount', 'integer', false, true],
    ['currency', 'string', false, true],
  ],
};

// 2.5 and 3.1
const ENUMS: Record<string, string[]> = {
  KycStatus: ['notStarted', 'documentsRequested', 'pending', 'processing', 'approved', 'resubmissionRequested', 'rejected', 'requiresAction'],
  SyncStatus: ['pending', 'synced'],
};

interface PropertyShape {
  type: string;
  nullable: boolean;
}

function schemaByRef(ref: string): JsonObject {
  const schema = schemas.get(refTitle(ref));
  if (!schema) throw new Error(`unresolved $ref ${ref}`);
  return schema;
}

/** Reads a property schema as the table would write it: its type and whether null is allowed. */
function propertyShape(property: JsonObject): PropertyShape {
  if (property.$ref) {
    const target = schemaByRef(property.$ref);
    const kind = target.enum ? 'enum' : target.type;
    return { type: kind === 'enum' || kind === 'object' ? `${kind}:${target.title}` : kind, nullable: false };
  }
  if (property.anyOf) {
    const nonNull = property.anyOf.filter((branch: JsonObject) => branch.type !== 'null');
    expect(nonNull, 'a nullable anyOf has exactly one non-null branch').toHaveLength(1);
    return { type: propertyShape(nonNull[0]).type, nullable: property.anyOf.length > nonNull.length };
  }
  const types: string[] = Array.isArray(property.type) ? property.type : [property.type];
  const nonNull = types.filter((type) => type !== 'null');
  expect(nonNull, `one type besides null: ${JSON.stringify(property)}`).toHaveLength(1);
  const type = nonNull[0] === 'array' ? `array:${schemaByRef(property.items.$ref).title}` : nonNull[0];
  return { type, nullable: types.includes('null') };
}

describe('resources have exactly the fields, types, nullability and presence of reference section 2', () => {
  for (const [title, rows] of Object.entries(RESOURCE_TABLES)) {
    describe(title, () => {
      const schema = schemas.get(title)!;

      it('is an object schema with exactly the fields of the table', () => {
        expect(schema.type).toBe('object');
        expect(Object.keys(schema.properties).sort()).toEqual(rows.map(([field]) => field).sort());
      });

      it.each(rows)('%s is %s, nullable %s, required %s', (field, type, nullable, required) => {
        const property = schema.properties[field];
        expect(propertyShape(property)).toEqual({ type, nullable });
        expect((schema.required ?? []).includes(field)).toBe(required);
        expect(typeof property.description === 'string' && property.description.length > 0).toBe(true);
      });
    });
  }

  it('a missing nullable field is invalid: User lists all twenty fields as required (2.1)', () => {
    expect(schemas.get('User')!.required).toHaveLength(20);
  });
});

describe('enums have exactly the values of reference 2.5 and 3.1', () => {
  it.each(Object.entries(ENUMS))('%s', (title, values) => {
    const schema = schemas.get(title)!;
    expect(schema.type).toBe('string');
    expect(schema.enum).toEqual(values);
  });
});

describe('the onboarding status is an open string with the four known values of reference 3.3', () => {
  const schema = schemas.get('OnboardingStatus')!;
  const known = ['action_accept_tos', 'waiting_kyc_setup', 'action_complete_kyc', 'action_complete_sof',
    'action_create_account', 'action_verify_phone', 'action_create_card', 'completed'];

  it('lists the known values in the observed order (four from 3.3, four named by assumption), each with a description', () => {
    const enumBranch = schema.anyOf.find((branch: JsonObject) => branch.enum);
    expect(enumBranch.enum).toEqual(known);
    expect(Object.keys(enumBranch['x-enum-descriptions'])).toEqual(known);
  });

  it('accepts any other string, since the full list is not shown', () => {
    expect(schema.anyOf).toContainEqual({ type: 'string' });
  });
});

// ---- Section 3.1: spending-limit sync status ------------------------------------------
describe('the spending-limit sync status follows reference 3.1', () => {
  it('records the transitions of the state table', () => {
    expect(schemas.get('SyncStatus')!['x-state-transitions']).toEqual([
      { from: null, by: 'setAccountLimit', condition: 'Valid request', to: 'pending' },
      { from: 'pending', by: 'Downstream application of the change', condition: 'Change applied', to: 'synced' },
    ]);
  });

  it('a PUT answers the new limit with syncStatus pending', () => {
    const schema = openapi.paths['/user-api/user/account/limit'].put.responses['200'].content['application/json'].schema;
    expect(schema.allOf).toContainEqual({ $ref: '#/components/schemas/AccountLimit' });
    const pendingBranch = schema.allOf.find((branch: JsonObject) => branch.properties?.syncStatus);
    expect(pendingBranch.properties.syncStatus.const).toBe('pending');
  });
});

// ---- Section 4: endpoints --------------------------------------------------------------
interface EndpointRow {
  operationId: string;
  method: string;
  path: string;
  auth: 'bearer' | 'none';
  server: 'core' | 'webhooks';
  statuses: string[];
  request?: string;
  response?: { contentType: string; schema: string };
}

const CORE_ENDPOINTS: EndpointRow[] = [
  // 4.1
  { operationId: 'getNonce', method: 'get', path: '/api/v1/auth/nonce', auth: 'none', server: 'core', statuses: ['200'], response: { contentType: 'text/plain', schema: 'Nonce' } },
  // 4.2, 5 and 7
  { operationId: 'verifySiweSignature', method: 'post', path: '/api/v1/auth/challenge', auth: 'none', server: 'core', statuses: ['200', '401', '403', '415', '422'], request: 'SiweChallengeRequest', response: { contentType: 'application/json', schema: 'AccessToken' } },
  // 4.3
  { operationId: 'getAccountLimit', method: 'get', path: '/user-api/user/account/limit', auth: 'bearer', server: 'core', statuses: ['200', '401', '409'], response: { contentType: 'application/json', schema: 'AccountLimit' } },
  // 4.4
  { operationId: 'setAccountLimit', method: 'put', path: '/user-api/user/account/limit', auth: 'bearer', server: 'core', statuses: ['200', '400', '401', '409', '415', '422'], request: 'SetAccountLimitRequest' },
  // 4.5
  { operationId: 'getWebhookPublicKey', method: 'get', path: '/api/v1/public-key', auth: 'none', server: 'webhooks', statuses: ['200'], response: { contentType: 'application/json', schema: 'WebhookPublicKey' } },
];

// 4.7 (and the steps of 3.3): paths and methods as written where the reference gives them;
// shapes, and the operations it only names as steps, are decisions marked x-assumption.
const WRITE_ERRORS = ['200', '400', '401', '409', '415', '422'];
const ONBOARDING_ENDPOINTS: EndpointRow[] = [
  { operationId: 'getOnboardingStatus', method: 'get', path: '/user/onboarding', auth: 'bearer', server: 'core', statuses: ['200', '401'], response: { contentType: 'application/json', schema: 'OnboardingStatusResponse' } },
  { operationId: 'requestEmailVerification', method: 'post', path: '/email/verification', auth: 'bearer', server: 'core', statuses: WRITE_ERRORS, request: 'EmailVerificationRequest', response: { contentType: 'application/json', schema: 'OneTimePasswordSent' } },
  { operationId: 'getUser', method: 'get', path: '/user', auth: 'bearer', server: 'core', statuses: ['200', '401'], response: { contentType: 'application/json', schema: 'User' } },
  { operationId: 'registerUser', method: 'post', path: '/user', auth: 'bearer', server: 'core', statuses: WRITE_ERRORS, request: 'RegisterUserRequest', response: { contentType: 'application/json', schema: 'User' } },
  { operationId: 'acceptTerms', method: 'post', path: '/user/terms', auth: 'bearer', server: 'core', statuses: WRITE_ERRORS, request: 'AcceptTermsRequest', response: { contentType: 'application/json', schema: 'User' } },
  { operationId: 'submitSourceOfFunds', method: 'post', path: '/source-of-funds', auth: 'bearer', server: 'core', statuses: WRITE_ERRORS, request: 'SourceOfFundsRequest', response: { contentType: 'application/json', schema: 'User' } },
  { operationId: 'requestPhoneVerification', method: 'post', path: '/phone/verification', auth: 'bearer', server: 'core', statuses: WRITE_ERRORS, request: 'PhoneVerificationRequest', response: { contentType: 'application/json', schema: 'OneTimePasswordSent' } },
  { operationId: 'setPhone', method: 'post', path: '/phone', auth: 'bearer', server: 'core', statuses: WRITE_ERRORS, request: 'SetPhoneRequest', response: { contentType: 'application/json', schema: 'User' } },
  { operationId: 'updatePhone', method: 'patch', path: '/phone', auth: 'bearer', server: 'core', statuses: WRITE_ERRORS, request: 'SetPhoneRequest', response: { contentType: 'application/json', schema: 'User' } },
  { operationId: 'createAccount', method: 'post', path: '/account', auth: 'bearer', server: 'core', statuses: ['200', '401', '409'], response: { contentType: 'application/json', schema: 'User' } },
  { operationId: 'createCard', method: 'post', path: '/cards', auth: 'bearer', server: 'core', statuses: WRITE_ERRORS, request: 'CreateCardRequest', response: { contentType: 'application/json', schema: 'User' } },
  { operationId: 'requestLegacyPhoneVerification', method: 'post', path: '/api/v1/verification', auth: 'bearer', server: 'core', statuses: ['200', '400', '401', '415', '422'], request: 'PhoneVerificationRequest', response: { contentType: 'application/json', schema: 'OneTimePasswordSent' } },
  { operationId: 'checkLegacyPhoneVerification', method: 'post', path: '/api/v1/verification/check', auth: 'bearer', server: 'core', statuses: ['200', '400', '401', '415', '422'], request: 'SetPhoneRequest', response: { contentType: 'application/json', schema: 'User' } },
];

const ENDPOINTS = [...CORE_ENDPOINTS, ...ONBOARDING_ENDPOINTS];

function operationsOf(document: JsonObject): Array<{ operationId: string; method: string; path: string; operation: JsonObject }> {
  return Object.entries(document.paths).flatMap(([path, item]: [string, any]) =>
    ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'].filter((method) => item[method]).map((method) => ({ operationId: item[method].operationId, method, path, operation: item[method] })),
  );
}

describe('endpoints have the method, path, authentication, server and statuses of reference section 4', () => {
  it('the spec has exactly the operations of the tables, no more', () => {
    expect(operationsOf(openapi).map(({ operationId, method, path }) => `${operationId} ${method} ${path}`).sort()).toEqual(
      ENDPOINTS.map(({ operationId, method, path }) => `${operationId} ${method} ${path}`).sort(),
    );
  });

  describe.each(ENDPOINTS)('$operationId: $method $path', (row) => {
    const item = openapi.paths[row.path];
    const operation = item?.[row.method];

    it('exists under that path and method', () => {
      expect(operation?.operationId).toBe(row.operationId);
    });

    it(`authentication: ${row.auth}`, () => {
      expect(operation.security).toEqual(row.auth === 'bearer' ? [{ bearerAuth: [] }] : []);
    });

    it(`statuses: ${row.statuses.join(', ')}`, () => {
      expect(Object.keys(operation.responses).sort()).toEqual(row.statuses);
    });

    it('every error status answers the one ErrorBody schema', () => {
      for (const status of row.statuses.filter((code) => Number(code) >= 400)) {
        const response = resolveResponse(operation.responses[status]);
        expect(response.content['application/json'].schema, `${status}`).toEqual({ $ref: '#/components/schemas/ErrorBody' });
      }
    });

    it(`server: ${row.server}`, () => {
      if (row.server === 'webhooks') {
        expect(item.servers).toHaveLength(1);
        expect(item.servers[0].url).toBe('{webhooksUrl}');
      } else {
        expect(item.servers).toBeUndefined();
      }
    });

    if (row.request) {
      it(`request body: ${row.request} as application/json, required`, () => {
        expect(operation.requestBody.required).toBe(true);
        expect(operation.requestBody.content['application/json'].schema).toEqual({ $ref: `#/components/schemas/${row.request}` });
      });
    }

    if (row.response) {
      it(`200 response: ${row.response.schema} as ${row.response.contentType}`, () => {
        expect(operation.responses['200'].content[row.response!.contentType].schema).toEqual({ $ref: `#/components/schemas/${row.response!.schema}` });
      });
    }

    if (ONBOARDING_ENDPOINTS.includes(row)) {
      it('carries the decision behind its shapes in an x-assumption', () => {
        expect(operation['x-assumption']).toMatchObject({ decision: expect.any(String), reason: expect.any(String) });
        expect(operation['x-unspecified']).toBeUndefined();
      });
    }
  });

  // 4.2 and 4.4: `Content-Type | application/json`. Any other type (or none) is refused, on
  // every operation that takes a JSON body (the onboarding operations' bodies are JSON too).
  it('every operation that takes a JSON body answers 415 UnsupportedMediaType to another Content-Type', () => {
    const withBody = operationsOf(openapi).filter(({ operation }) => operation.requestBody);
    expect(withBody.map(({ operationId }) => operationId).sort()).toEqual(ENDPOINTS.filter((row) => row.request).map((row) => row.operationId).sort());
    for (const { operationId, operation } of withBody) {
      expect(Object.keys(operation.requestBody.content), operationId).toEqual(['application/json']);
      expect(operation.responses['415'], operationId).toEqual({ $ref: '#/components/responses/UnsupportedMediaType' });
    }
  });

  it('the bearer scheme is an HTTP bearer JWT (2.9)', () => {
    expect(openapi.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
  });

  it('the core base URL is a server variable for sandbox and production', () => {
    expect(openapi.servers.map((server: JsonObject) => [server.url, server['x-environment'], Object.keys(server.variables)])).toEqual([
      ['{baseUrl}', 'sandbox', ['baseUrl']],
      ['{baseUrl}', 'production', ['baseUrl']],
    ]);
  });

  it('names the domain refusals of reference 5 and 7 by code: WAFForbidden and DomainNotWhitelisted', () => {
    const examples = openapi.paths['/api/v1/auth/challenge'].post.responses['403'].content['application/json'].examples;
    expect(Object.values(examples).map((example: any) => example.value.code).sort()).toEqual(['DomainNotWhitelisted', 'WAFForbidden']);
  });

  it('ErrorBody has the optional string fields error, message and code', () => {
    const errorBody = schemas.get('ErrorBody')!;
    expect(errorBody.required).toBeUndefined();
    expect(Object.fromEntries(Object.entries(errorBody.properties).map(([name, property]: [string, any]) => [name, property.type]))).toEqual({ error: 'string', message: 'string', code: 'string' });
  });
});

function resolveResponse(response: JsonObject): JsonObject {
  if (!response.$ref) return response;
  const name = /^#\/components\/responses\/(.+)$/.exec(response.$ref)![1];
  return openapi.components.responses[name];
}

// ---- Section 8: limits -------------------------------------------------------------------
describe('the limits of reference section 8 are schema constraints', () => {
  it.each([
    ['SetAccountLimitRequest', 'amount', { type: 'integer', exclusiveMinimum: 0, maximum: 1000000 }],
    ['SetAccountLimitRequest', 'currency', { type: 'string', enum: ['USD'] }],
    ['SiweChallengeRequest', 'ttlInSeconds', { type: 'integer', minimum: 3600, maximum: 86400 }],
    ['AccountLimit', 'amount', { type: 'integer', exclusiveMinimum: 0, 'x-service-default': 1000000 }],
  ])('%s.%s', (title, field, constraints) => {
    expect(schemas.get(title)!.properties[field]).toMatchObject(constraints);
  });

  it('token lifetimes: older 1 to 24 hours via ttlInSeconds, newer access 15 minutes and refresh 7 days', () => {
    expect(openapi.paths['/api/v1/auth/challenge'].post['x-token-lifetimes']).toEqual({
      olderGeneration: { tokenSeconds: { minimum: 3600, maximum: 86400, from: 'ttlInSeconds' } },
      newerGeneration: { accessTokenSeconds: 900, refreshTokenSeconds: 604800, refreshTokenRotates: true },
    });
  });

  it('webhook delivery: reply within 30 seconds, 3 retries after 1, 5 and 15 minutes', () => {
    expect(asyncapi.info['x-delivery']).toMatchObject({ method: 'POST', successStatus: '2xx', replyTimeoutSeconds: 30, maxRetries: 3, retryDelaysSeconds: [60, 300, 900] });
    // Not shown in 6.3, decided (x-assumption below): each delay runs from the end of the previous attempt.
    expect(asyncapi.info['x-delivery'].retryDelaysFrom).toBe('endOfPreviousAttempt');
    // Not shown in 4.6, decided there too: the 30 seconds cover the whole answer, body included.
    expect(asyncapi.info['x-delivery'].replyTimeoutCovers).toBe('wholeAnswer');
  });

  // The rows of the table that are not schema constraints, in the reference's words.
  const LIMIT_ROWS: Array<[limit: string, value: string, appliesTo: string]> = [
    ['Scope of the daily limit', 'Cumulative across all cards on the account; not per card and not per transaction', 'Card spending'],
    ['Authorization near the limit', 'An authorization that meets or exceeds the remaining limit can still be approved; later eligible authorizations that day are declined', 'Card authorizations'],
    ['Onchain daily spending limit (newer)', 'fixed at 20,000 USD, no signature required', 'Account'],
  ];

  it('AccountLimit x-limit-rules transcribes the scope, authorization and onchain rows', () => {
    const rules = schemas.get('AccountLimit')!['x-limit-rules'] as JsonObject[];
    expect(rules.map(({ limit, value, appliesTo }) => [limit, value, appliesTo])).toEqual(LIMIT_ROWS);
  });

  it('x-limit-rules says the same as machine-readable fields', () => {
    const [scope, nearLimit, onchain] = schemas.get('AccountLimit')!['x-limit-rules'] as JsonObject[];
    expect(scope).toMatchObject({ cumulativeAcrossCards: true, perCard: false, perTransaction: false });
    expect(nearLimit).toMatchObject({ lastAuthorizationMayExceedRemaining: true, laterAuthorizationsThatDay: 'declined' });
    // 20,000 USD in the limit's unit (cents), on the newer generation, without a signature.
    expect(onchain).toMatchObject({ generation: 'newer', amountCents: 20_000 * 100, fixed: true, signatureRequired: false });
  });
});

// ---- Section 9: versioning, the differences between the generations ------------------------
const GENERATION_DIFFERENCES: Array<[feature: string, older: string, newer: string]> = [
  ['Sign-in token', 'Single token, 24 hours', 'Access token 15 minutes plus refresh token 7 days with rotation'],
  ['Reversals', 'Processed after 1 business day', 'Processed right after the clearing message'],
  ['KYC', 'Done by the service and shared with partners', 'Can be done by partners and shared with the service'],
  ['Phone number', 'Always verified with SMS one-time password', 'Depends on partner requirement: one-time password flow, or set when the first card is created'],
  ['Smart account deployment', 'Dedicated deployment endpoint', 'Single `/account` endpoint'],
  ['Tokens', 'Single token/currency', 'Multiple currencies, different balance states'],
  ['Balances', 'Spendable, non-spendable, total', 'Spendable, authorized holds, non-spendable, processing deposits'],
  ['Withdrawals', 'Subject to delay module', 'Instant, bypassing the delay module'],
  ['Onchain daily limit', 'Set by user with an onchain signature', 'Fixed 20,000 USD'],
  ['Delay module', '3-minute delay, 30-minute expiration', '25-hour delay, 31-hour expiration'],
  ['Transactions', 'Card and onchain separated; onchain via RPC only', 'Unified account-statement endpoint'],
  ['Owner address', 'Several SIWE addresses could be added', 'One owner, fixed at account creation'],
  ['Pre-authorization holds', 'Not allowed', 'Allowed'],
];

describe('the differences between the generations are those of reference 9', () => {
  it('info.x-generation-differences lists the table, row by row, as {feature, older, newer}', () => {
    const rows = openapi.info['x-generation-differences'] as JsonObject[];
    for (const row of rows) expect(Object.keys(row)).toEqual(['feature', 'older', 'newer']);
    expect(rows.map(({ feature, older, newer }) => [feature, older, newer])).toEqual(GENERATION_DIFFERENCES);
  });

  it('the operations follow the rows they implement', () => {
    // Sign-in token: the lifetimes (also checked with section 8).
    expect(openapi.paths['/api/v1/auth/challenge'].post['x-token-lifetimes'].newerGeneration).toMatchObject({ accessTokenSeconds: 900, refreshTokenSeconds: 604800, refreshTokenRotates: true });
    // Smart account deployment: the single /account endpoint is the newer generation's.
    expect(openapi.paths['/account'].post['x-generation']).toBe('newer');
    // Phone number: SMS one-time password on the older generation; the one-time-password flow or the first card on the newer one.
    expect(openapi.paths['/api/v1/verification'].post['x-generation']).toBe('older');
    expect(openapi.paths['/phone/verification'].post['x-generation']).toBe('newer');
    expect(schemas.get('CreateCardRequest')!.properties.phone).toBeDefined();
    // Onchain daily limit: the older generation has no limit endpoint; the newer one's onchain limit is fixed.
    expect(openapi.paths['/user-api/user/account/limit'].get['x-generation']).toBe('newer');
  });
});

// ---- Sections 4.6 and 6: webhook events ---------------------------------------------------
const EVENTS: Array<[eventType: string, schema: string, data: string]> = [
  ['user.created', 'UserCreatedEvent', 'User'],
  ['kyc.status.changed', 'KycStatusChangedEvent', 'User'],
  ['kyc.phone-validation.changed', 'KycPhoneValidationChangedEvent', 'User'],
  ['kyc.source-of-funds.changed', 'KycSourceOfFundsChangedEvent', 'User'],
  ['card.transaction.created', 'CardTransactionCreatedEvent', 'UnspecifiedObject'],
];

describe('webhook events are {eventType, data} with the signed headers of reference 6', () => {
  const messages = Object.values(asyncapi.components.messages) as JsonObject[];

  it('the AsyncAPI document has exactly the five event kinds, version 1.0.0', () => {
    expect(asyncapi.asyncapi).toBe('3.0.0');
    expect(asyncapi.info.version).toBe('1.0.0');
    expect(messages.map((message) => message.name).sort()).toEqual(EVENTS.map(([eventType]) => eventType).sort());
  });

  describe.each(EVENTS)('%s', (eventType, title, data) => {
    const message = messages.find((candidate) => candidate.name === eventType)!;
    const schema = schemas.get(title)!;

    it(`payload ${title}: eventType const and data ${data}, both required`, () => {
      expect(message.payload).toEqual({ $ref: `#/components/schemas/${title}` });
      expect(schema.required).toEqual(['eventType', 'data']);
      expect(schema.properties.eventType.const).toBe(eventType);
      expect(refTitle(schema.properties.data.$ref)).toBe(data);
      expect(schema['x-schema-version']).toBe('1.0.0');
    });

    it('headers WebhookHeaders, delivered by POST', () => {
      expect(message.headers).toEqual({ $ref: '#/components/schemas/WebhookHeaders' });
      const operation = Object.values(asyncapi.operations).find((candidate: any) => candidate.messages[0].$ref.endsWith(`/${Object.keys(asyncapi.components.messages).find((key) => asyncapi.components.messages[key] === message)}`)) as JsonObject;
      expect(operation.action).toBe('receive');
      expect(operation.bindings.http.method).toBe('POST');
    });
  });

  it('card.transaction.created data is open and marked unspecified', () => {
    expect(schemas.get('UnspecifiedObject')).toMatchObject({ type: 'object', 'x-unspecified': true });
  });

  it('X-Webhook-Timestamp is decimal digits; X-Webhook-Signature is base64 of 64 bytes', () => {
    const headers = schemas.get('WebhookHeaders')!;
    expect(headers.required).toEqual(['X-Webhook-Timestamp', 'X-Webhook-Signature']);
    expect(headers.properties['X-Webhook-Timestamp']).toMatchObject({ type: 'string', pattern: '^[0-9]+$' });
    expect(headers.properties['X-Webhook-Signature']).toMatchObject({ type: 'string', pattern: '^[A-Za-z0-9+/]{86}==$' });
    expect(Buffer.from('A'.repeat(86) + '==', 'base64')).toHaveLength(64);
  });

  it('the OpenAPI webhooks are exactly the AsyncAPI events, each keyed by its eventType with the same payload schema', () => {
    // A new event kind goes in both: @capi/openapi-types exports the webhook bodies from
    // `webhooks`, @capi/event-types from the AsyncAPI messages.
    const fromAsyncapi = Object.values(asyncapi.components.messages as Record<string, JsonObject>).map((message) => [message.name, refTitle((message.payload as JsonObject).$ref as string)]);
    const fromOpenapi = Object.entries(openapi.webhooks as Record<string, any>).map(([eventType, item]) => [eventType, refTitle(item.post.requestBody.content['application/json'].schema.$ref)]);
    expect(fromOpenapi.sort()).toEqual(fromAsyncapi.sort());
  });

  it('the OpenAPI webhooks carry the same header patterns as WebhookHeaders', () => {
    const headers = schemas.get('WebhookHeaders')!;
    for (const [eventType, item] of Object.entries(openapi.webhooks) as Array<[string, any]>) {
      const patterns = Object.fromEntries(item.post.parameters.map((parameter: JsonObject) => [parameter.name, parameter.schema.pattern]));
      expect(patterns, eventType).toEqual({
        'X-Webhook-Timestamp': headers.properties['X-Webhook-Timestamp'].pattern,
        'X-Webhook-Signature': headers.properties['X-Webhook-Signature'].pattern,
      });
    }
  });

  it('the signature covers `${timestamp}.${rawBody}` and is checked within 300 seconds', () => {
    expect(asyncapi.info['x-signature']).toMatchObject({ algorithm: 'Ed25519', signedPayload: '${timestamp}.${rawBody}', signatureEncoding: 'base64', timestampToleranceSeconds: 300 });
  });
});

// ---- "not shown": every decision the specs take where the reference is silent -------------
// [what the reference leaves open, where the specs decide it]
const ASSUMPTIONS: Array<[openPoint: string, at: () => JsonObject]> = [
  ['4.1 nonce response shape: text/plain', () => openapi.paths['/api/v1/auth/nonce'].get.responses['200']],
  ['4.1 nonce format', () => schemas.get('Nonce')!],
  ['4.2 response field names: {token}', () => schemas.get('AccessToken')!],
  ['5.7 refresh token field name', () => schemas.get('AccessToken')!.properties.refreshToken],
  ['2.9 JWT claims', () => schemas.get('AccessTokenClaims')!],
  ['4.2 signature encoding', () => schemas.get('SiweChallengeRequest')!.properties.signature],
  ['4.2 invalid signature, nonce and message-window status: 401', () => openapi.paths['/api/v1/auth/challenge'].post.responses['401']],
  ['4.2 and 4.4 a Content-Type other than JSON: 415', () => openapi.components.responses.UnsupportedMediaType],
  ['7 WAFForbidden and non-whitelisted domain status: 403', () => openapi.paths['/api/v1/auth/challenge'].post.responses['403']],
  ['4.2 validation status: 422', () => openapi.paths['/api/v1/auth/challenge'].post.responses['422']],
  ['7 limit validation status: 422', () => openapi.paths['/user-api/user/account/limit'].put.responses['422']],
  ['4.4 body not JSON: 400', () => openapi.paths['/user-api/user/account/limit'].put.responses['400']],
  ['7 error body shape', () => schemas.get('ErrorBody')!],
  ['7 401 body', () => openapi.components.responses.Unauthorized],
  ['4.3 currency returned or not', () => schemas.get('AccountLimit')!.properties.currency],
  ['8 default limit under a lower agreed maximum', () => schemas.get('AccountLimit')!.properties.amount],
  ['3.1 sync status of a limit never set', () => schemas.get('SyncStatus')!],
  ['8 maximum raised by agreement', () => schemas.get('SetAccountLimitRequest')!.properties.amount],
  ['2.8 public key encoding', () => schemas.get('WebhookPublicKey')!.properties.publicKey],
  ['4.5 authentication of the key endpoint', () => openapi.paths['/api/v1/public-key'].get],
  ['6.2 timestamp unit and tolerance', () => schemas.get('WebhookHeaders')!.properties['X-Webhook-Timestamp']],
  ['6.1 other event kinds', () => schemas.get('WebhookEvent')!],
  ['6.1 the operation that emits user.created', () => openapi.paths['/user'].post.responses['200']],
  ['6.1 user.created is sent by registration, migrated users included', () => asyncapi.components.messages.userCreated],
  ['6.1 createAccount emits no event', () => openapi.paths['/account'].post.responses['200']],
  ['6.1 a phone number change emits no event', () => openapi.paths['/phone'].patch.responses['200']],
  ['6.1 the legacy check with a new number emits no event', () => openapi.paths['/api/v1/verification/check'].post.responses['200']],
  ['6.1 the first card\'s phone emits no event', () => openapi.paths['/cards'].post.responses['200']],
  ['6.3 retry delays measured from the end of the previous attempt', () => asyncapi.info['x-delivery']],
  ['4.6 the 30 seconds cover the whole answer, its body included', () => asyncapi.info['x-delivery']],
  ['2.3 timestamp format of activatedAt', () => schemas.get('Card')!.properties.activatedAt],
  ['2.2 wallet address format', () => schemas.get('WalletAddress')!],
  ['3.3 full list of onboarding statuses', () => schemas.get('OnboardingStatus')!],
  ['3.3 transitions of the onboarding status (it can go back)', () => schemas.get('OnboardingStatus')!.anyOf[0]],
  ['4.7 onboarding response shape', () => schemas.get('OnboardingStatusResponse')!],
  ['4.7 method of /account', () => openapi.paths['/account'].post],
  ['4.7 path and method of /verification/check', () => openapi.paths['/api/v1/verification/check'].post],
  ['4.7 authentication of the onboarding operations', () => openapi.paths['/user/onboarding'].get],
  ['{base_url} addresses', () => openapi.servers[0]],
  ['{webhooks_url} address', () => openapi.paths['/api/v1/public-key'].servers[0]],
  ['the partner receiver URL', () => asyncapi.servers.partnerReceiver],
];

describe('every point the reference leaves open is decided with a well-formed x-assumption', () => {
  it.each(ASSUMPTIONS)('%s', (_openPoint, at) => {
    const assumption = at()['x-assumption'];
    expect(assumption).toBeDefined();
    expect(typeof assumption.decision === 'string' && assumption.decision.length > 0).toBe(true);
    expect(typeof assumption.reason === 'string' && assumption.reason.length > 0).toBe(true);
  });
});
