/**
 * Every guard sees what the native sees (string-guards.ts states the rule): the receiver and each
 * argument are converted once, by the guard, and the native gets the converted values; a protocol
 * method is read once. The payloads are generated from the guards' own lists, so a method added to a
 * list is tested here without a line more, and the first test checks the lists are the guarded methods.
 *
 * How a double conversion is caught: each argument is an object whose `valueOf` and `toString` are
 * getters that count their reads and answer a small value the first time, something else after. A guard
 * that converts once and hands the native the result leaves every count at 1.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ARRAY_GUARDS,
  type ArrayArgKind,
  TYPED_ARRAY_GUARDS,
} from '../../../src/sandbox/prelude/array-guards.ts';
import type { Protocol } from '../../../src/sandbox/prelude/coerce.ts';
import { type ArgKind, STRING_GUARDS } from '../../../src/sandbox/prelude/string-guards.ts';
import { createSandbox } from '../../../src/sandbox/session.ts';
import type { BlockResult, Sandbox } from '../../../src/sandbox/types.ts';
import { ROOMY_LIMITS } from '../roomy-limits.ts';

const PROTOCOLS: Protocol[] = ['match', 'matchAll', 'replace', 'search', 'split'];
/** 80 M characters: over the 64 Mi cap. Built once per session as `BIG` (concatenation is not capped). */
const DEFINE_BIG = "var BIG = (() => { const h = 'a'.repeat(4e7); return h + h; })();";

/** Helpers defined in the session: `changing(i, first, later)` and `reads`. */
const DEFINE_CHANGING = `
var reads = [];
/** The read counts of the objects made since the last reset, in order. */
function counts() { const out = reads.filter(() => true).join(); reads = []; return out; }
function changing(i, first, later) {
  reads[i] = 0;
  const answer = () => (++reads[i] === 1 ? () => first : () => later);
  return { get valueOf() { return answer(); }, get toString() { return answer(); } };
}`;

let sb: Sandbox;
beforeAll(async () => {
  // Room for building the big strings however loaded the machine (see ROOMY_LIMITS).
  sb = await createSandbox({}, { ...ROOMY_LIMITS, memoryMb: 1024 });
  const r = await sb.run(DEFINE_BIG + DEFINE_CHANGING);
  expect(r.error).toBeNull();
});
afterAll(() => sb.dispose());

async function run(code: string): Promise<BlockResult> {
  return sb.run(code);
}

/** A value the native accepts for a string method's argument of this kind, and a different one. */
function stringSample(kind: ArgKind): [string, string] {
  switch (kind) {
    case 'number':
      return ['1', '7e7'];
    case 'optional-string':
      return ["'NFC'", "'NFD'"];
    default:
      return ["'a'", "'b'"];
  }
}

describe('the guard lists', () => {
  it('are exactly the built-ins the prelude replaced', async () => {
    const r = await run(`
      const replaced = (proto) => Object.getOwnPropertyNames(proto)
        .filter((k) => typeof Object.getOwnPropertyDescriptor(proto, k).value === 'function')
        .filter((k) => !String(Object.getOwnPropertyDescriptor(proto, k).value).includes('[native code]'));
      const typed = Object.getPrototypeOf(Object.getPrototypeOf(new Uint8Array(0)));
      print(JSON.stringify({
        string: replaced(Object.getPrototypeOf('')),
        array: replaced(Object.getPrototypeOf([])),
        typed: replaced(typed),
      }));`);
    const lists = JSON.parse(r.stdout) as Record<string, string[]>;
    expect(lists.string?.sort()).toEqual(STRING_GUARDS.map((g) => g.name).sort());
    expect(lists.array?.sort()).toEqual(ARRAY_GUARDS.map((g) => g.name).sort());
    expect(lists.typed?.sort()).toEqual(TYPED_ARRAY_GUARDS.map((g) => g.name).sort());
  });
});

describe('string guards: the receiver', () => {
  for (const guard of STRING_GUARDS) {
    const args = guard.args.map((k) => stringSample(k)[0]).join(', ');
    it(`${guard.name}: a String object or an object converting to a string over the cap is refused`, async () => {
      for (const receiver of ['Object(BIG)', '{ toString() { return BIG; } }']) {
        const r = await run(`''[${JSON.stringify(guard.name)}].call(${receiver}, ${args})`);
        expect(r.error?.message, receiver).toMatch(/over the sandbox limit/);
        expect(r.reset).toBe(false);
      }
    });
  }
});

describe('string guards: one conversion of the receiver and of each argument', () => {
  for (const guard of STRING_GUARDS) {
    it(`${guard.name}: converts each once and hands the native what it converted`, async () => {
      const args = guard.args.map((kind, i) => {
        if (kind === 'object') return 'undefined';
        const [first, later] = stringSample(kind);
        return `changing(${i + 1}, ${first}, ${later})`;
      });
      const r = await run(
        `''[${JSON.stringify(guard.name)}].call(changing(0, 'abc', BIG), ${args.join(', ')}); print(counts())`,
      );
      expect(r.error).toBeNull();
      const expected = ['1', ...guard.args.filter((k) => k !== 'object').map(() => '1')];
      expect(r.stdout).toBe(`${expected.join()}\n`);
    });
  }

  for (const guard of STRING_GUARDS.filter((g) => g.args.includes('string'))) {
    it(`${guard.name}: its other string is capped too`, async () => {
      const args = guard.args.map((k) => (k === 'string' ? 'Object(BIG)' : 'undefined'));
      const r = await run(`'a'[${JSON.stringify(guard.name)}](${args.join(', ')})`);
      expect(r.error?.message).toMatch(/over the sandbox limit/);
    });
  }

  for (const guard of STRING_GUARDS.filter((g) => g.compiles)) {
    it(`${guard.name}: a pattern object converting to a long source is refused`, async () => {
      const r = await run(`'a'[${JSON.stringify(guard.name)}]({ toString() { return 'a'.repeat(9000); } })`);
      expect(r.error?.message).toMatch(/RegExp: a pattern of 9000 characters is over the sandbox limit/);
    });
  }

  for (const guard of STRING_GUARDS.filter((g) => g.builds)) {
    it(`${guard.name}: the size is checked on the count the native uses`, async () => {
      const r = await run(
        `let c = 0; 'a'[${JSON.stringify(guard.name)}]({ valueOf() { return c++ ? 7e7 : 2; } }).length`,
      );
      expect(r.stdout).toBe('2\n');
      expect((await run(`'a'[${JSON.stringify(guard.name)}](7e7)`)).error?.message).toMatch(
        /over the sandbox limit/,
      );
    });
  }
});

describe('string guards: the protocol method is read once', () => {
  for (const guard of STRING_GUARDS.filter((g) => g.protocol !== undefined)) {
    const symbol = `Symbol.${guard.protocol}`;
    const flags = guard.globalOnly ? ", flags: 'g', [Symbol.match]: true" : '';
    it(`${guard.name}: a getter answering a method, then nothing, has the method called`, async () => {
      const r = await run(`
        let n = 0, called = 0;
        const pattern = { get [${symbol}]() { return ++n === 1 ? () => { called++; return 'via method'; } : undefined; },
          toString() { return 'a'.repeat(9000); }${flags} };
        const out = 'abc'[${JSON.stringify(guard.name)}](pattern, 'x');
        print(n, called, out);`);
      expect(r.error).toBeNull();
      expect(r.stdout).toBe('1 1 via method\n');
    });
    it(`${guard.name}: a getter answering nothing, then a method, has the pattern converted`, async () => {
      const r = await run(`
        let n = 0, called = 0;
        const pattern = { get [${symbol}]() { return ++n === 1 ? undefined : () => { called++; return 'via method'; }; },
          toString() { return 'b'; } };
        'abc'[${JSON.stringify(guard.name)}](pattern, 'x');
        print(n, called);`);
      expect(r.error).toBeNull();
      expect(r.stdout).toBe('1 0\n');
    });
  }
});

describe('RegExp protocol methods: their string is converted once and capped', () => {
  for (const protocol of PROTOCOLS) {
    const call = (subject: string, rest = '') => `/a/g[Symbol.${protocol}](${subject}${rest})`;
    it(`[Symbol.${protocol}]`, async () => {
      for (const subject of ['BIG', 'Object(BIG)', '{ toString() { return BIG; } }']) {
        const r = await run(call(subject));
        expect(r.error?.message, subject).toMatch(/over the sandbox limit/);
      }
      const second =
        protocol === 'replace'
          ? ", changing(1, 'x', 'y')"
          : protocol === 'split'
            ? ', changing(1, 5, 6)'
            : '';
      const r = await run(`${call("changing(0, 'abc', BIG)", second)}; print(counts())`);
      expect(r.error).toBeNull();
      expect(r.stdout).toBe(second === '' ? '1\n' : '1,1\n');
    });
  }
});

describe('RegExp and compile: pattern and flags converted once, every kind of pattern bounded', () => {
  it('converts each once', async () => {
    for (const code of [
      `new RegExp(changing(0, 'a', 'b'), changing(1, 'g', 'y'))`,
      `RegExp(changing(0, 'a', 'b'), changing(1, 'g', 'y'))`,
      `/x/.compile(changing(0, 'a', 'b'), changing(1, 'g', 'y'))`,
    ]) {
      const r = await run(`${code}; print(counts())`);
      expect(r.stdout, code).toBe('1,1\n');
    }
  });

  it('bounds a function, a regex-like object and a regex with a poisoned Symbol.match', async () => {
    const long = "'a'.repeat(9000)";
    for (const code of [
      `new RegExp(Object.assign(function () {}, { toString() { return ${long}; } }))`,
      `/x/.compile(Object.assign(() => {}, { toString() { return ${long}; } }))`,
    ]) {
      const r = await run(code);
      expect(r.error?.message, code).toMatch(/over the sandbox limit/);
    }
    const like = await run(
      `let n = 0; const re = new RegExp({ [Symbol.match]: true, get source() { return n++ ? ${long} : 'a'; } }); print(re.source, n)`,
    );
    expect(like.stdout).toBe('a 1\n');
    const r = await run(`let m = 0; const re = /ab/gi;
      Object.defineProperty(re, Symbol.match, { get() { m++; return false; } });
      const copy = new RegExp(re); print(copy.source, copy.flags, m)`);
    expect(r.stdout).toBe('ab gi 1\n');
  });
});

describe('array guards: arguments converted once, then a length no model code can change', () => {
  const CALLBACKS = new Set(['forEach', 'map', 'filter', 'some', 'every', 'find', 'findIndex', 'findLast']);
  const arg = (kind: ArrayArgKind, i: number, name: string) => {
    if (kind === 'number') return `changing(${i}, 1, 1e9)`;
    if (kind === 'string') return `changing(${i}, '-', '+')`;
    if (i === 0 && (CALLBACKS.has(name) || name.startsWith('find') || name === 'flatMap')) return '(a) => a';
    if (i === 0 && name.startsWith('reduce')) return '(a, b) => a + b';
    return 'undefined';
  };
  for (const [list, receiver, label] of [
    [ARRAY_GUARDS, '[3, 1, 2]', 'Array'],
    [TYPED_ARRAY_GUARDS, 'new Uint8Array([3, 1, 2])', 'TypedArray'],
  ] as const) {
    for (const guard of list) {
      it(`${label}.prototype.${guard.name}: converts each once`, async () => {
        const args = guard.args.map((k, i) => arg(k, i, guard.name));
        const r = await run(
          `${receiver}[${JSON.stringify(guard.name)}](${args.join(', ')}); print(counts())`,
        );
        expect(r.error).toBeNull();
        const expected = guard.args.filter((k) => k !== 'any').map(() => '1');
        expect(r.stdout).toBe(`${expected.join()}\n`);
      });
    }
  }
  for (const guard of ARRAY_GUARDS) {
    it(`Array.prototype.${guard.name}: a receiver whose length is a getter or an object is refused`, async () => {
      for (const receiver of [
        '{ get length() { return n++ ? 2e9 : 0; } }',
        '{ length: { valueOf() { return n++ ? 2e9 : 0; } } }',
        'Object.create({ get length() { return n++ ? 2e9 : 0; } })',
      ]) {
        const r = await run(`let n = 0; [][${JSON.stringify(guard.name)}].call(${receiver}, () => 0)`);
        expect(r.error?.message, receiver).toMatch(/length is (a getter|an object)/);
      }
    });
  }
});

describe('the other guards', () => {
  it('ArrayBuffer reserves the maxByteLength it checked, whatever the options object is', async () => {
    const r = await run(`let c = 0;
      const b = new ArrayBuffer(8, { maxByteLength: { valueOf() { return c++ ? 4e9 : 16; } } });
      print(b.maxByteLength, c)`);
    expect(r.stdout).toBe('16 1\n');
    const f = await run('new ArrayBuffer(8, Object.assign(function () {}, { maxByteLength: 4e9 }))');
    expect(f.error?.message).toMatch(/maxByteLength of 4000000000 bytes is over/);
  });

  it('Array.from reads an array-like length once and an iterator method once', async () => {
    const r =
      await run(`let n = 0; const a = Array.from({ get length() { return n++ ? 2e9 : 2; }, 0: 'x', 1: 'y' }, (v, i) => v + i);
      let m = 0; const b = Array.from({ get [Symbol.iterator]() { m++; return m === 1 ? [][Symbol.iterator].bind(['p']) : undefined; }, length: 2e9 });
      print(a.join(), n, b.join(), m)`);
    expect(r.error).toBeNull();
    expect(r.stdout).toBe('x0,y1 1 p 1\n');
    const big = await run('Array.from({ length: 2e9 })');
    expect(big.error?.message).toMatch(/Array.from: length 2000000000 is over the sandbox limit/);
  });

  it('String.raw reads its raw length once, bounded, and walks it where the CPU limit can stop it', async () => {
    const r = await run(
      // The tagged template is model code: its placeholder is the sandbox's, not this file's.
      // biome-ignore lint/suspicious/noTemplateCurlyInString: see above
      'let n = 0; const x = 5; print(String.raw`a${x}\\n`, String.raw({ raw: { get length() { return n++ ? 1e9 : 2; }, 0: "p", 1: "q" } }, 1), n)',
    );
    expect(r.stdout).toBe('a5\\n p1q 1\n');
    const big = await run('String.raw({ raw: { length: 1e8 } })');
    expect(big.error?.message).toMatch(/String.raw: length 100000000 is over the sandbox limit/);
    expect(big.reset).toBe(false);
  });

  it("Intl.Collator's compare caps and converts both strings once, one function per collator", async () => {
    const r = await run(`const c = new Intl.Collator();
      print(c.compare === c.compare, ['b', 'a'].sort(c.compare).join(), c.compare(changing(0, 'a', 'z'), changing(1, 'b', 'a')), counts())`);
    expect(r.stdout).toBe('true a,b -1 1,1\n');
    for (const code of [
      'new Intl.Collator().compare(BIG, "a")',
      'new Intl.Collator().compare("a", Object(BIG))',
    ]) {
      expect((await run(code)).error?.message, code).toMatch(
        /Intl.Collator.prototype.compare: a string of 80000000/,
      );
    }
  });

  it('JSON.parse converts its text once', async () => {
    const r = await run(
      `let c = 0; const v = JSON.parse({ toString() { return c++ ? '[' : '[1]'; } }); print(v[0], c)`,
    );
    expect(r.stdout).toBe('1 1\n');
  });
});
