export const USAGE = `capi-sandbox: a local capi service (SIWE auth, users, daily limits, signed webhooks)

Usage:
  capi-sandbox [serve] [options]      serve is the default command
  capi-sandbox send-event TYPE --to URL [--data FILE] [--private-key FILE] [--unknown-event-type | --unchecked]
  capi-sandbox send-event TYPE --sandbox [URL] [--to URL]... [--data FILE | --user-id ID] [--unknown-event-type | --unchecked] [--duplicate]
  capi-sandbox --version | --help

serve options:
  --port N                 core API port (default 4010; 0 picks a free port)
  --webhooks-port N        webhook key service port (default: --port + 1, or free when --port is 0)
  --host HOST              interface to listen on (default 127.0.0.1)
  --users FILE             JSON file of users to seed: an array, or {"users": [...]}
  --user ADDRESS           seed a user signing in with this wallet (repeatable)
  --webhook-url URL        POST every event to this partner endpoint (repeatable)
  --time-scale N           divide the webhook retry delays (1, 5, 15 min) by N (default 1)
  --delivery-timeout MS    how long a receiver has to answer (default 30000)
  --duplicate-rate R       send this share of deliveries twice, 0 to 1 (default 0; 1: every one)
  --duplicate-after MS     start a duplicate this long after the first copy (default 0: beside it)
  --limit-sync-delay MS    how long a new daily limit stays pending (default 2000; manual: until
                           POST /__sandbox/limits/sync)
  --generation G           older (default): one token, ttlInSeconds, no daily limit (404); newer: 15-min access
                           + 7-day refresh token, onboarding and the daily limit
  --whitelist DOMAIN       accept this SIWE domain besides localhost (repeatable)
  --max-daily-limit CENTS  the partner's agreed maximum daily limit (default 1000000); a lower one is
                           also every account's default limit
  --require-phone          newer: the partner requires phone verification (action_verify_phone)
  --migration-kyc-setup MS newer: how long a migrated user waits at waiting_kyc_setup after the terms
                           (default 5000)
  --webhook-private-key FILE
                           sign webhooks with this PKCS8 PEM Ed25519 key (openssl genpkey -algorithm ed25519)
                           at every start, so a receiver keeps its public key across restarts (default:
                           a new key pair at each start)
  --quiet                  print no line per request and per webhook delivery attempt

send-event:
  TYPE                     user.created | kyc.status.changed | kyc.phone-validation.changed |
                           kyc.source-of-funds.changed | card.transaction.created (any other kind only
                           with --unknown-event-type)
  --to URL                 the receiver to POST to (required without --sandbox; repeatable with it)
  --data FILE              JSON file with the event's data (default: a sample user or transaction;
                           with --sandbox, the sandbox's first user)
  --private-key FILE       PKCS8 PEM Ed25519 key to sign with (default: a fresh key, printed)
  --sandbox [URL]          the running sandbox at URL (default http://127.0.0.1:4010) signs the event
                           with its key and delivers it, retried like the live service, to --to or
                           to its webhook endpoints; exit 2 when no sandbox answers there
  --user-id ID             with --sandbox: the event's data is this user of the sandbox
  --unknown-event-type     TYPE is a kind the SDK does not know (reference 6.1: receivers acknowledge it
                           with a 2xx and ignore it); --data, a JSON object (default {}), is sent unchecked
  --allow-unknown-fields   send --data with fields the event's schema does not define (refused without it:
                           the service never sends them), to test a receiver's tolerance of newer fields
  --unchecked              send --data (a JSON object) of a known TYPE without checking it against the
                           schema (an unknown kycStatus, a missing field), signed like any event, to test
                           a receiver's handling of schema drift (dead letters, replay)
  --duplicate              with --sandbox: send the event twice, as the service may (duplicates are
                           possible); a receiver should handle it once (the copy answered duplicate)
`;
