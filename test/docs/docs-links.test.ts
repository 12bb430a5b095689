// Every relative link and #anchor in README.md, CHANGELOG.md, BENCHMARKS.md and docs/ resolves: the file exists
// and the anchor is one of its headings as GitHub slugs them. And the front pages stay short.
import { existsSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import t from 'tap';
import { REPO, anchorsOf, docPages, readPage, withoutCodeBlocks } from './docs-pages.js';

/** Markdown links [text](target) outside code, with the line they are on. */
function linksOf(text: string): { target: string; line: number }[] {
  const links: { target: string; line: number }[] = [];
  withoutCodeBlocks(text)
    .split('\n')
    .forEach((line, index) => {
      const prose = line.replace(/`[^`]*`/g, '');
      for (const match of prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) links.push({ target: match[1]!, line: index + 1 });
    });
  return links;
}

/** What is wrong with one link, or null when it resolves. */
export function brokenLink(page: string, target: string): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return null; // https:, mailto: …: not checked here (no network)
  const [path, anchor] = target.split('#', 2) as [string, string | undefined];
  const file = path === '' ? page : normalize(join(dirname(page), decodeURIComponent(path)));
  if (file.startsWith('..')) return `${target} leaves the repository`;
  if (!existsSync(join(REPO, file))) return `${target}: no file ${file}`;
  if (anchor === undefined) return null;
  if (!file.endsWith('.md')) return `${target}: an anchor into a file that is not Markdown`;
  return anchorsOf(readPage(file)).has(anchor) ? null : `${target}: ${file} has no heading whose anchor is #${anchor}`;
}

t.test('every relative link and anchor in the docs resolves', async (t) => {
  let links = 0;
  const broken: string[] = [];
  for (const page of docPages()) {
    for (const { target, line } of linksOf(readPage(page))) {
      links++;
      const problem = brokenLink(page, target);
      if (problem !== null) broken.push(`${page}:${line}: ${problem}`);
    }
  }
  t.ok(links > 100, `links were found and checked (${links})`);
  t.same(broken, [], 'no broken link');
});

t.test('the link checker itself: slugs as GitHub makes them, and a broken link is caught', async (t) => {
  t.equal(brokenLink('README.md', 'docs/callers.md#one-count-for-the-whole-deployment-redis'), null);
  t.equal(brokenLink('docs/errors.md', '#the-gateways-own-errors'), null, "punctuation dropped: the gateway's");
  t.equal(brokenLink('docs/responses.md', '#inbound-format-the-openai-responses-api-post-v1responses'), null, 'code spans and slashes');
  t.match(brokenLink('README.md', 'docs/callers.md#no-such-heading'), /no heading/);
  t.match(brokenLink('README.md', 'docs/no-such-page.md'), /no file/);
});

t.test('the front pages stay short', async (t) => {
  const lines = (page: string) => readPage(page).trimEnd().split('\n').length;
  t.ok(lines('README.md') <= 250, `README.md has ${lines('README.md')} lines (at most 250)`);
  t.ok(lines('BENCHMARKS.md') <= 260, `BENCHMARKS.md has ${lines('BENCHMARKS.md')} lines (at most 260)`);
});

t.test('the README answers the six questions, each in one link', async (t) => {
  const readme = readPage('README.md');
  const questions: [string, string][] = [
    ['add a provider', 'docs/adding-a-provider.md'],
    ['limit a team', 'docs/callers.md'],
    ['see cost per team', 'docs/observability.md'],
    ['set up failover', 'docs/failover.md'],
    ['upgrade', 'docs/upgrading.md'],
    ['know current performance', 'docs/performance.md'],
  ];
  for (const [question, page] of questions) {
    const row = readme.split('\n').find((line) => line.startsWith(`| ${question}`));
    t.ok(row?.includes(`](${page})`), `README.md: "${question}" links to ${page}`);
  }
});
