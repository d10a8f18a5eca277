import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { verifyWebhookSignature } from '@capi/webhook-signature';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '@capi/release-tools/workspace-packages';
import { listOperations, serverUrl } from '../src/api-pages.mjs';
import { buildSite } from '../src/build-site.mjs';
import { chromiumArgs, chromiumPath } from '../src/diagrams.mjs';
import { examplePublicKey, listEvents } from '../src/event-pages.mjs';
import { brokenLinks, colourRules, crawl, darkModeViolations, notVisible, remoteRequests, screenshotPage, seriousViolations, sidewaysScroll, type PageFacts } from './site-checks';
import { serveDirectory } from './static-server';

const packageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const distDir = path.join(packageDir, 'dist');
/** Where the screenshots go (named in the README): screenshots/<width>/<page>.png. */
const screenshotsDir = path.join(packageDir, 'screenshots');
const widths = [1280, 390] as const;
const openapi = JSON.parse(readFileSync(path.join(repoRoot, 'specs/dist/openapi.json'), 'utf8'));
const asyncapi = JSON.parse(readFileSync(path.join(repoRoot, 'specs/dist/asyncapi.json'), 'utf8'));

let browser: Browser;
let site: Awaited<ReturnType<typeof serveDirectory>>;
const requested: string[] = [];

beforeAll(async () => {
  // `turbo run test` builds first; a bare `vitest run` on a clean checkout builds here.
  if (!existsSync(path.join(distDir, 'index.html'))) await buildSite();
  site = await serveDirectory(distDir);
  browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs });
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await site?.close();
});

async function open(pathname: string, width: number): Promise<Page> {
  const page = await browser.newPage({ viewport: { width, height: 900 } });
  page.on('request', (request) => requested.push(request.url()));
  const response = await page.goto(`${site.origin}${pathname}`, { waitUntil: 'load' });
  expect(response?.status(), pathname).toBe(200);
  return page;
}

const fetchStatus = async (pathname: string) => (await fetch(`${site.origin}${pathname}`)).status;

/** The pages whose screenshots are written to screenshots/<width>/ (the README names them). */
const screenshotPages = ['/', '/guides/quick-start.html', '/guides/sign-in.html', '/api/', '/api/verifySiweSignature.html', '/api/getWebhookPublicKey.html', '/events/', '/events/user.created.html', '/packages/client/', '/packages/client/reference/', '/maintainers/'];
const screenshotFile = (width: number, pathname: string) => path.join(screenshotsDir, String(width), `${pathname.replace(/^\/|\.html$/g, '').replace(/\/$/, '').replace(/\//g, '_') || 'home'}.png`);

for (const width of widths) {
  describe(`every page at ${width} px`, () => {
    let pages: Map<string, PageFacts>;
    const sideways: string[] = [];
    const violations: string[] = [];
    const darkViolations: string[] = [];
    const screenshots = new Map<string, { width: number; height: number }>();

    beforeAll(async () => {
      rmSync(path.join(screenshotsDir, String(width)), { recursive: true, force: true });
      mkdirSync(path.join(screenshotsDir, String(width)), { recursive: true });
      // One visit per page, as readers get it (scripts on), two pages at a time: its links and
      // ids, its width, its screenshot, axe-core on the whole page, then the colour rules again
      // in dark mode.
      const reading = await browser.newContext({ viewport: { width, height: 900 } });
      reading.on('request', (request) => requested.push(request.url()));
      // Where the time goes, printed once per width (the CI log shows it).
      const spent = { screenshots: 0, axe: 0, dark: 0 };
      const timed = async <T>(part: keyof typeof spent, work: () => Promise<T>): Promise<T> => {
        const started = performance.now();
        try {
          return await work();
        } finally {
          spent[part] += performance.now() - started;
        }
      };
      const started = performance.now();
      pages = await crawl(reading, site.origin, '/', {
        visit: async (page, facts) => {
          const overflow = await sidewaysScroll(page);
          if (overflow > 0) sideways.push(`${facts.path} scrolls ${overflow} px sideways`);
          if (screenshotPages.includes(facts.path)) screenshots.set(facts.path, await timed('screenshots', () => screenshotPage(page, screenshotFile(width, facts.path))));
          violations.push(...(await timed('axe', () => seriousViolations(page))).map((violation) => `${facts.path}: ${violation}`));
          darkViolations.push(...(await timed('dark', () => darkModeViolations(page))).map((violation) => `${facts.path} (dark): ${violation}`));
        },
      });
      await reading.close();
      const seconds = (ms: number) => `${(ms / 1000).toFixed(0)} s`;
      console.log(`${pages.size} pages at ${width} px in ${seconds(performance.now() - started)}, two at a time; summed over pages: axe ${seconds(spent.axe)}, axe colour rules in dark mode ${seconds(spent.dark)}, screenshots ${seconds(spent.screenshots)}`);
    }, 1_200_000);

    it('reaches every part of the site: guides, API, events, packages, maintainers', () => {
      const paths = [...pages.keys()];
      expect(paths.length).toBeGreaterThan(40);
      for (const section of ['/guides/', '/api/', '/events/', '/packages/client/', '/maintainers/']) expect(paths.some((page) => page.startsWith(section)), section).toBe(true);
      expect([...pages.values()].filter((facts) => facts.status !== 200).map((facts) => `${facts.path}: ${facts.status}`)).toEqual([]);
    });

    it('resolves every internal link and #anchor', async () => {
      expect(await brokenLinks(pages, fetchStatus)).toEqual([]);
    }, 120_000);

    it('scrolls no page sideways', () => {
      expect(sideways).toEqual([]);
    });

    it('has no serious or critical axe-core violation on any page', () => {
      expect(violations).toEqual([]);
    });

    it('has no serious or critical colour violation on any page in dark mode', () => {
      expect(darkViolations).toEqual([]);
    });

    it(`writes screenshots of the main pages to screenshots/${width}/`, () => {
      for (const pathname of screenshotPages) {
        const file = screenshotFile(width, pathname);
        expect(existsSync(file), file).toBe(true);
        const png = readFileSync(file);
        // The PNG header holds the image's size: the page's width, its height up to the cap.
        expect({ width: png.readUInt32BE(16), height: png.readUInt32BE(20) }, pathname).toEqual(screenshots.get(pathname));
        expect(png.readUInt32BE(20), pathname).toBeGreaterThan(400);
      }
    });
  });
}

/** Opens each path in turn, two pages at a time in one context, and hands it to `check`. */
async function eachPage(paths: string[], width: number, check: (page: Page, pathname: string) => Promise<void>): Promise<void> {
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  context.on('request', (request) => requested.push(request.url()));
  const queue = [...paths];
  const worker = async () => {
    const page = await context.newPage();
    for (let pathname = queue.shift(); pathname !== undefined; pathname = queue.shift()) {
      const response = await page.goto(`${site.origin}${pathname}`, { waitUntil: 'load' });
      expect(response?.status(), pathname).toBe(200);
      await check(page, pathname);
    }
  };
  try {
    await Promise.all([worker(), worker()]);
  } finally {
    await context.close();
  }
}

describe('the API reference shows every operation, server and named example', () => {
  const operations = listOperations(openapi);

  it('lists the operations of the spec', () => {
    expect(operations.map((entry) => entry.operation.operationId)).toEqual(expect.arrayContaining(['getNonce', 'verifySiweSignature', 'getAccountLimit', 'setAccountLimit', 'getWebhookPublicKey']));
  });

  for (const width of widths) {
    it(`shows on each operation's page its operationId, its servers and every named example, at ${width} px`, async () => {
      const missing: string[] = [];
      const byPath = new Map(operations.map((entry) => [`/api/${entry.operation.operationId}.html`, entry]));
      await eachPage([...byPath.keys()], width, async (page, pathname) => {
        const { operation, servers } = byPath.get(pathname)!;
        const examples = [operation.requestBody, ...Object.values(operation.responses ?? {})]
          .flatMap((part: any) => Object.values((part?.$ref ? openapi.components.responses[part.$ref.split('/').pop()] : part)?.content ?? {}))
          .flatMap((media: any) => Object.keys(media.examples ?? {}));
        const expected = [operation.operationId, ...servers.map(serverUrl), ...examples.map((name) => `Example: ${name}`), 'Request samples'];
        missing.push(...(await notVisible(page, expected)).map((text) => `${operation.operationId}: ${text}`));
      });
      expect(missing.sort()).toEqual([]);
    }, 180_000);
  }

  it('shows both base URLs on the overview and that getWebhookPublicKey lives on {webhooks_url}', async () => {
    const page = await open('/api/', 1280);
    expect(await notVisible(page, ['https://sandbox.capi.invalid', 'https://api.capi.invalid', 'getWebhookPublicKey on https://webhooks.capi.invalid'])).toEqual([]);
    await page.close();
    const key = await open('/api/getWebhookPublicKey.html', 1280);
    expect(await notVisible(key, ['is not on the core API', 'https://webhooks.capi.invalid'])).toEqual([]);
    expect(await key.getByText('https://sandbox.capi.invalid').count()).toBe(0);
    await key.close();
  }, 60_000);

  it('describes an error body once, on the schema page, instead of under every error', async () => {
    const page = await open('/api/verifySiweSignature.html', 1280);
    expect(await page.locator('a[href*="schemas.html#errorbody"]').count()).toBeGreaterThanOrEqual(3);
    expect(await page.locator('td code', { hasText: /^code$/ }).count()).toBe(0);
    await page.close();
  }, 60_000);

  it('offers the specs for download', async () => {
    for (const file of ['openapi.json', 'asyncapi.json']) {
      const response = await fetch(`${site.origin}/${file}`);
      expect(response.status, file).toBe(200);
      expect(JSON.parse(await response.text())).toEqual(file === 'openapi.json' ? openapi : asyncapi);
    }
  });
});

describe('the event reference shows every event with signed example deliveries', () => {
  let events: Awaited<ReturnType<typeof listEvents>>;
  beforeAll(async () => {
    events = await listEvents(asyncapi);
  });

  it('lists the event types of the spec', () => {
    expect(events.map((event) => event.eventType)).toEqual(expect.arrayContaining(['user.created', 'kyc.status.changed', 'kyc.phone-validation.changed', 'kyc.source-of-funds.changed', 'card.transaction.created']));
  });

  for (const width of widths) {
    it(`shows each event type with a delivery whose signature verifies with the documentation key, at ${width} px`, async () => {
      const byPath = new Map(events.map((event) => [`/events/${event.eventType}.html`, event]));
      await eachPage([...byPath.keys()], width, async (page, pathname) => {
        const { eventType, message } = byPath.get(pathname)!;
        expect(await notVisible(page, [eventType, 'X-Webhook-Signature', 'X-Webhook-Timestamp', ...message.examples.map((example: any) => `Example: ${example.name}`)]), eventType).toEqual([]);
        const delivery = await page.locator('div.language-http pre').first().innerText();
        const [head, rawBody] = delivery.split(/\n\n/) as [string, string];
        const header = (name: string) => new RegExp(`^${name}: (.+)$`, 'm').exec(head)?.[1];
        await expect(verifyWebhookSignature({ rawBody: rawBody.trim(), timestamp: header('X-Webhook-Timestamp'), signature: header('X-Webhook-Signature'), publicKey: examplePublicKey, toleranceSeconds: 0 })).resolves.toBeUndefined();
        expect(JSON.parse(rawBody).eventType).toBe(eventType);
      });
    }, 120_000);
  }

  it('shows the delivery rules, the retry schedule and its timeline on the overview', async () => {
    const page = await open('/events/', 1280);
    expect(await notVisible(page, ['30 seconds', '1 minutes after the previous attempt failed', '5 minutes after the previous attempt failed', '15 minutes after the previous attempt failed', 'about 21 minutes after the first attempt', 'Documentation test key'])).toEqual([]);
    expect(await page.locator('img[src$="/diagrams/retries.svg"]').isVisible()).toBe(true);
    await page.close();
  }, 60_000);
});

describe('shows the diagrams as SVG rendered at build time', () => {
  it('has the sign-in sequence, the onboarding steps and the retry timeline, each a real SVG', async () => {
    for (const [pathname, image] of [['/guides/sign-in.html', 'sign-in'], ['/api/', 'onboarding'], ['/events/', 'retries']] as const) {
      const page = await open(pathname, 1280);
      const img = page.locator(`img[src$="/diagrams/${image}.svg"]`);
      expect(await img.isVisible(), image).toBe(true);
      expect(await img.evaluate((element) => (element as HTMLImageElement).complete && (element as HTMLImageElement).naturalWidth > 0), image).toBe(true);
      expect(await img.evaluate((element) => element.getBoundingClientRect().width), image).toBeGreaterThan(300);
      expect(await img.getAttribute('alt'), image).toMatch(/sequence|steps|timeline/);
      await page.close();
    }
    expect(readFileSync(path.join(distDir, 'diagrams/onboarding.svg'), 'utf8')).toContain('action_complete_kyc');
  }, 60_000);
});

describe('one offline search across guides, API, events and packages', () => {
  async function search(query: string): Promise<string[]> {
    const page = await open('/', 1280);
    await page.getByRole('button', { name: /search/i }).first().click();
    const input = page.locator('#localsearch-input');
    await input.fill(query);
    await page.locator('.VPLocalSearchBox .result').first().waitFor();
    const hrefs = await page.locator('.VPLocalSearchBox .result').evaluateAll((links) => links.map((link) => (link as HTMLAnchorElement).getAttribute('href') ?? ''));
    await page.close();
    return hrefs;
  }

  it('finds an operation', async () => {
    expect((await search('Get the webhook public key')).some((href) => href.includes('/api/getWebhookPublicKey.html'))).toBe(true);
  }, 60_000);

  it('finds an event', async () => {
    expect((await search('kyc.source-of-funds.changed')).some((href) => href.includes('/events/kyc.source-of-funds.changed.html'))).toBe(true);
  }, 60_000);

  it('finds a package symbol', async () => {
    expect((await search('createPartnerClient')).some((href) => href.includes('/packages/client/reference/') && href.includes('#createpartnerclient'))).toBe(true);
  }, 60_000);
});

describe('links the guides to operations and package symbols', () => {
  // The crawl checks that every one of these links (and its #anchor) resolves.
  const guideLinks = async (pathname: string) => {
    const page = await open(pathname, 1280);
    const links = await page.locator('.vp-doc a').evaluateAll((anchors) => anchors.map((anchor) => ({ text: anchor.textContent ?? '', href: (anchor as HTMLAnchorElement).pathname + (anchor as HTMLAnchorElement).hash })));
    await page.close();
    return links;
  };

  it('links the routes and the methods the sign-in guide names to their operations and symbols', async () => {
    const links = await guideLinks('/guides/sign-in.html');
    expect(links).toEqual(expect.arrayContaining([
      { text: 'GET /api/v1/auth/nonce', href: '/api/getNonce.html' },
      { text: 'POST /api/v1/auth/challenge', href: '/api/verifySiweSignature.html' },
      { text: 'client.signInWithEthereum', href: expect.stringMatching(/^\/packages\/client\/reference\/(?:[a-z]+\.html)?#signinwithethereum$/) },
    ]));
    expect(links.some((link) => link.href.startsWith('/packages/client/reference/') && link.text === 'TokenManager')).toBe(true);
  }, 60_000);

  it('links the operations and the package functions of the onboarding guide', async () => {
    const links = await guideLinks('/guides/onboarding-newer-generation.html');
    expect(links).toEqual(expect.arrayContaining([
      { text: 'getOnboardingStatus', href: '/api/getOnboardingStatus.html' },
      { text: 'GET /user/onboarding', href: '/api/getOnboardingStatus.html' },
      { text: 'getUser(client)', href: expect.stringMatching(/^\/packages\/client\/reference\/onboarding\.html#getuser/) },
    ]));
  }, 60_000);

  it('links the webhook key route, on its own server, to its operation', async () => {
    const links = await guideLinks('/guides/receiving-webhooks.html');
    expect(links).toEqual(expect.arrayContaining([{ text: 'GET {webhooks_url}/api/v1/public-key', href: '/api/getWebhookPublicKey.html' }]));
  }, 60_000);
});

describe('works offline: no request leaves localhost', () => {
  it('recorded only requests to the local server (or in-page data and blob URLs)', () => {
    expect(requested.length).toBeGreaterThan(100);
    expect(remoteRequests(requested, site.origin)).toEqual([]);
  });

  it('catches a page that loads a remote font and a CDN script (seeded fault)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'capi-docs-leak-'));
    writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>leak</title><link rel="stylesheet" href="https://fonts.googleapis.com/css?family=Roboto"><script src="https://cdn.example.invalid/redoc.js"></script><p>hi</p>');
    const leaky = await serveDirectory(dir);
    try {
      const page = await browser.newPage();
      const seen: string[] = [];
      page.on('request', (request) => seen.push(request.url()));
      await page.goto(`${leaky.origin}/index.html`, { waitUntil: 'load' });
      await page.close();
      expect(remoteRequests(seen, leaky.origin).sort()).toEqual(['https://cdn.example.invalid/redoc.js', 'https://fonts.googleapis.com/css?family=Roboto']);
    } finally {
      await leaky.close();
      rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
    }
  }, 60_000);
});

describe('seeded faults fail their checks', () => {
  it('a broken link and a missing #anchor are reported', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'capi-docs-broken-'));
    writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>home</title><h1 id="top">home</h1><a href="/missing.html">gone</a> <a href="/index.html#nowhere">no anchor</a> <a href="/index.html#top">fine</a>');
    const broken = await serveDirectory(dir);
    try {
      const context = await browser.newContext();
      const pages = await crawl(context, broken.origin, '/index.html');
      await context.close();
      const reported = await brokenLinks(pages, async (pathname) => (await fetch(`${broken.origin}${pathname}`)).status);
      expect(reported).toEqual(['/index.html -> /missing.html (HTTP 404)', '/index.html -> /index.html#nowhere (no element with id "nowhere")']);
    } finally {
      await broken.close();
      rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
    }
  }, 60_000);

  it('a named example missing from its operation page is reported', async () => {
    const page = await open('/api/verifySiweSignature.html', 390);
    await page.evaluate(() => document.querySelectorAll('h4').forEach((heading) => heading.textContent?.includes('domainNotWhitelisted') && heading.remove()));
    expect(await notVisible(page, ['Example: wafForbidden', 'Example: domainNotWhitelisted'])).toEqual(['Example: domainNotWhitelisted']);
    await page.close();
  }, 60_000);

  it('a colour that fails contrast in dark mode only is reported', async () => {
    const page = await open('/guides/quick-start.html', 1280);
    expect(await darkModeViolations(page)).toEqual([]);
    // The guide's title (h1#quick-start) made dark grey on the dark background.
    await page.addStyleTag({ content: '.dark .vp-doc h1 { color: #2b2b2b !important; }' });
    expect(await seriousViolations(page, { rules: colourRules })).toEqual([]);
    expect(await darkModeViolations(page)).toEqual(['serious color-contrast: #quick-start']);
    await page.close();
  }, 60_000);

  it('a page that scrolls sideways is reported', async () => {
    const page = await open('/guides/quick-start.html', 390);
    expect(await sidewaysScroll(page)).toBe(0);
    await page.evaluate(() => {
      const wide = document.createElement('p');
      wide.textContent = 'x'.repeat(400);
      wide.style.whiteSpace = 'nowrap';
      wide.style.width = 'max-content';
      document.querySelector('.vp-doc')?.append(wide);
    });
    expect(await sidewaysScroll(page)).toBeGreaterThan(0);
    await page.close();
  }, 60_000);
});
