// Stands in for the partner's own database in the examples: what the handlers write, the
// example tests read back.
import type { KycStatus } from '@capi/event-types';

/** Users' KYC status by user id, kept up to date by the webhook handlers. */
export const kycStatuses = new Map<string, KycStatus>();

/** Ids of the users created, in the order their `user.created` events arrived. */
export const createdUsers: string[] = [];
