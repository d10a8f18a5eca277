// The checks the site's tests run in Chromium, kept apart from the tests so the seeded
// faults go through exactly the same code as the real pages.
import { createRequire } from 'node:module';
import type { BrowserContext, Page } from 'playwright-core';

const require = createRequire(import.meta.url);
const axePath = require.resolve('axe-core/axe.min.js');

/** What one page holds: the ids its anchors can point at, and the internal links it makes. */
export interface PageFacts {
  path: string;
  status: number;
  ids: string[];
  links: string[];
}

/** The requests that went anywhere but the local server (data:, blob: and about: stay in the page). */
export function remoteRequests(urls: string[], origin: string): string[] {
  return urls.filter((url) => !url.startsWith(`${origin}/`) && !/^(data|blob|about):/.test(url));
}

/** Opens a page of the site and reads its ids and its same-origin links (paths with #hash). */
export async function readPage(page: Page, origin: string, path: string): Promise<PageFacts> {
  const response = await page.goto(`${origin}${path}`, { waitUntil: 'load' });
  const { ids, links } = await page.evaluate(() => ({
    ids: [...document.querySelectorAll('[id]')].map((element) => element.id),
    links: [...document.querySelectorAll('a[href]')].map((anchor) => (anchor as HTMLAnchorElement).href),
  }));
  return {
    path,
    status: response?.status() ?? 0,
    ids,
    links: [...new Set(links.filter((href) => href.startsWith(`${origin}/`)).map((href) => href.slice(origin.length)))],
  };
}

/**
 * Visits every page reachable from `start` by same-origin links (HTML pages only), `workers`
 * at a time, and returns what each holds.
 */
export async function crawl(context: BrowserContext, origin: string, start: string, { workers = 2, visit }: { workers?: number; visit?: (page: Page, facts: PageFacts) => Promise<void> } = {}): Promise<Map<string, PageFacts>> {
  const pages = new Map<string, PageFacts>();
  const queued = new Set<string>([start]);
  const queue = [start];
  let active = 0;
  const worker = async () => {
    const page = await context.newPage();
    try {
      for (;;) {
        const path = queue.shift();
        if (path === undefined) {
          if (active === 0) return;
          await new Promise((resolve) => setTimeout(resolve, 20));
          continue;
        }
        active += 1;
        try {
          const facts = await readPage(page, origin, path);
          pages.set(path, facts);
          if (facts.status === 200 && visit) await visit(page, facts);
          for (const link of facts.links) {
            const target = link.split('#')[0]!;
            if (!queued.has(target) && isPage(target)) {
              queued.add(target);
              queue.push(target);
            }
          }
        } finally {
          active -= 1;
        }
      }
    } finally {
      await page.close();
    }
  };
  await Promise.all(Array.from({ length: workers }, worker));
  return pages;
}

/** Whether a site path is an HTML page (not a download such as /openapi.json or an image). */
export function isPage(path: string): boolean {
  return path.endsWith('/') || path.endsWith('.html');
}

/**
 * Every link that does not resolve: a page that did not answer 200, or a `#anchor` with no
 * element of that id on its page. `fetchStatus` answers for non-page targets (downloads).
 */
export async function brokenLinks(pages: Map<string, PageFacts>, fetchStatus: (path: string) => Promise<number>): Promise<string[]> {
  const broken: string[] = [];
  const statuses = new Map<string, number>();
  for (const facts of pages.values()) {
    for (const link of facts.links) {
      const [target, hash] = link.split('#') as [string, string | undefined];
      const targetFacts = pages.get(target);
      let status = targetFacts?.status;
      if (status === undefined) {
        if (!statuses.has(target)) statuses.set(target, await fetchStatus(target));
        status = statuses.get(target)!;
      }
      if (status !== 200) broken.push(`${facts.path} -> ${link} (HTTP ${status})`);
      else if (hash && targetFacts && !targetFacts.ids.includes(decodeURIComponent(hash))) broken.push(`${facts.path} -> ${link} (no element with id "${decodeURIComponent(hash)}")`);
    }
  }
  return broken;
}

/** How many pixels the page scrolls sideways (0 when it fits its viewport). */
export async function sidewaysScroll(page: Page): Promise<number> {
  return page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
}

/** The serious and critical axe-core violations of the page, one line each; `rules` limits the run to those axe rules. */
export async function seriousViolations(page: Page, { rules }: { rules?: string[] } = {}): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in globalThis))) await page.addScriptTag({ path: axePath });
  const violations = await page.evaluate(async (only) => {
    const axe = (globalThis as any).axe;
    const result = await axe.run(document, { resultTypes: ['violations'], ...(only ? { runOnly: { type: 'rule', values: only } } : {}) });
    return result.violations.map((violation: any) => ({ id: violation.id, impact: violation.impact, targets: violation.nodes.slice(0, 3).map((node: any) => node.target.join(' ')) }));
  }, rules);
  return violations.filter((violation: any) => violation.impact === 'serious' || violation.impact === 'critical').map((violation: any) => `${violation.impact} ${violation.id}: ${violation.targets.join(', ')}`);
}

/**
 * The axe rules whose outcome depends on colours, the only ones a switch to dark mode can
 * change (the page's structure, names and roles stay the same).
 */
export const colourRules = ['color-contrast', 'link-in-text-block'];

/**
 * The serious and critical violations of the colour rules with the page in VitePress's dark
 * mode: the `dark` class on <html>, as the appearance switch sets it, with transitions off
 * so axe reads the final colours, not a fade between the two themes. The page is put back in
 * light mode after.
 */
export async function darkModeViolations(page: Page): Promise<string[]> {
  await page.evaluate(() => {
    const still = document.createElement('style');
    still.id = 'capi-test-no-transitions';
    still.textContent = '*, *::before, *::after { transition: none !important; animation: none !important; }';
    document.head.append(still);
    document.documentElement.classList.add('dark');
  });
  try {
    return await seriousViolations(page, { rules: colourRules });
  } finally {
    await page.evaluate(() => {
      document.documentElement.classList.remove('dark');
      // Apply the light colours while transitions are still off, or they fade back in.
      void getComputedStyle(document.body).color;
      void document.body.offsetHeight;
      document.getElementById('capi-test-no-transitions')?.remove();
    });
  }
}

/**
 * A screenshot of the whole page down to `maxHeight` px. Some TypeDoc pages are over
 * 100,000 px tall (the client's reference at 117,000, openapi-types' at 400,000): Chromium
 * takes from 17 s to a minute for those, over the screenshot time limit, and gives an image
 * nobody scrolls. Returns the image's size.
 */
export async function screenshotPage(page: Page, file: string, maxHeight = 12_000): Promise<{ width: number; height: number }> {
  const { width, height } = await page.evaluate(() => ({ width: document.documentElement.clientWidth, height: document.documentElement.scrollHeight }));
  const clip = { x: 0, y: 0, width, height: Math.min(height, maxHeight) };
  await page.screenshot({ path: file, fullPage: true, clip });
  return { width: clip.width, height: clip.height };
}

/** The texts of `expected` that are not visible in the page's content (`within`: the article, not its navigation). */
export async function notVisible(page: Page, expected: string[], within = '.vp-doc'): Promise<string[]> {
  const missing: string[] = [];
  for (const text of expected) {
    const visible = await page.locator(within).getByText(text, { exact: false }).first().isVisible().catch(() => false);
    if (!visible) missing.push(text);
  }
  return missing;
}
