// An app that uses both entries (every app that uses the onboarding entry also has the main
// one: its functions take a client from createPartnerClient). Bundled by bench/size.mjs.
export * from '../dist/index.js';
export * from '../dist/onboarding.js';
