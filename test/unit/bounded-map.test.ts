import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { BoundedMap } from '../../src/exchange/bounded-map.ts';

type Eviction = [key: string, value: number, why: 'capacity' | 'idle'];

function make(maxEntries: number, idleMs: number) {
  const evicted: Eviction[] = [];
  const map = new BoundedMap<string, number>(maxEntries, idleMs, (k, v, why) => evicted.push([k, v, why]));
  return { map, evicted };
}

describe('BoundedMap basics', () => {
  test('set, get, peek, size', () => {
    const { map, evicted } = make(10, 1000);
    assert.equal(map.size, 0);
    map.set('a', 1, 0);
    map.set('b', 2, 0);
    assert.equal(map.size, 2);
    assert.equal(map.get('a', 1), 1);
    assert.equal(map.peek('b'), 2);
    assert.equal(map.get('missing', 1), undefined);
    assert.equal(map.peek('missing'), undefined);
    assert.equal(map.size, 2, 'reads of a missing key do not create it');
    assert.deepEqual(evicted, []);
  });

  test('falsy values are stored and returned', () => {
    const { map } = make(10, 1000);
    map.set('zero', 0, 0);
    assert.equal(map.get('zero', 1), 0);
    assert.equal(map.peek('zero'), 0);
    assert.equal(map.delete('zero'), 0);
    assert.equal(map.size, 0);
  });

  test('delete returns the value, undefined when absent, and is not an eviction', () => {
    const { map, evicted } = make(10, 1000);
    map.set('a', 42, 0);
    assert.equal(map.delete('a'), 42);
    assert.equal(map.size, 0);
    assert.equal(map.delete('a'), undefined);
    assert.equal(map.get('a', 1), undefined);
    assert.deepEqual(evicted, []);
  });

  test('setting an existing key replaces its value without evicting', () => {
    const { map, evicted } = make(2, 1000);
    map.set('a', 1, 0);
    map.set('b', 2, 0);
    map.set('a', 3, 1);
    assert.equal(map.size, 2);
    assert.equal(map.peek('a'), 3);
    assert.deepEqual(evicted, []);
  });

  test('works without an onEvict callback', () => {
    const map = new BoundedMap<string, number>(1, 10);
    map.set('a', 1, 0);
    map.set('b', 2, 0);
    map.sweep(100);
    assert.equal(map.size, 0);
  });
});

describe('BoundedMap capacity eviction', () => {
  test('inserting past the limit evicts the oldest entry with why "capacity"', () => {
    const { map, evicted } = make(3, 1000);
    map.set('a', 1, 0);
    map.set('b', 2, 0);
    map.set('c', 3, 0);
    assert.deepEqual(evicted, []);
    map.set('d', 4, 0);
    assert.deepEqual(evicted, [['a', 1, 'capacity']]);
    assert.equal(map.size, 3);
    assert.equal(map.peek('a'), undefined);
    assert.equal(map.peek('d'), 4);
  });

  test('get() refreshes an entry so the least recently used goes first', () => {
    const { map, evicted } = make(3, 1000);
    map.set('a', 1, 0);
    map.set('b', 2, 0);
    map.set('c', 3, 0);
    map.get('a', 1);
    map.set('d', 4, 2);
    assert.deepEqual(evicted, [['b', 2, 'capacity']]);
    map.set('e', 5, 3);
    assert.deepEqual(evicted, [
      ['b', 2, 'capacity'],
      ['c', 3, 'capacity'],
    ]);
    assert.equal(map.peek('a'), 1);
  });

  test('peek() does not refresh', () => {
    const { map, evicted } = make(3, 1000);
    map.set('a', 1, 0);
    map.set('b', 2, 0);
    map.set('c', 3, 0);
    assert.equal(map.peek('a'), 1);
    map.set('d', 4, 1);
    assert.deepEqual(evicted, [['a', 1, 'capacity']]);
  });

  test('re-setting a key refreshes it', () => {
    const { map, evicted } = make(2, 1000);
    map.set('a', 1, 0);
    map.set('b', 2, 0);
    map.set('a', 10, 1);
    map.set('c', 3, 2);
    assert.deepEqual(evicted, [['b', 2, 'capacity']]);
  });

  test('capacity 1 keeps only the newest', () => {
    const { map, evicted } = make(1, 1000);
    map.set('a', 1, 0);
    map.set('b', 2, 0);
    map.set('c', 3, 0);
    assert.deepEqual(
      evicted.map(([k]) => k),
      ['a', 'b'],
    );
    assert.equal(map.size, 1);
    assert.equal(map.peek('c'), 3);
  });
});

describe('BoundedMap idle sweep', () => {
  test('sweep evicts only entries idle for idleMs or more, with why "idle"', () => {
    const { map, evicted } = make(10, 100);
    map.set('a', 1, 0);
    map.set('b', 2, 50);
    map.set('c', 3, 90);
    map.sweep(99);
    assert.deepEqual(evicted, []);
    map.sweep(160);
    assert.deepEqual(evicted, [
      ['a', 1, 'idle'],
      ['b', 2, 'idle'],
    ]);
    assert.equal(map.size, 1);
    assert.equal(map.peek('c'), 3);
  });

  test('get() resets the idle clock and moves the entry behind the others', () => {
    const { map, evicted } = make(10, 100);
    map.set('a', 1, 0);
    map.set('b', 2, 10);
    map.get('a', 95);
    // a was touched at 95 (idle 55), b at 10 (idle 140): b must go even though a was inserted first.
    map.sweep(150);
    assert.deepEqual(evicted, [['b', 2, 'idle']]);
    assert.equal(map.peek('a'), 1);
  });

  test('peek() does not reset the idle clock', () => {
    const { map, evicted } = make(10, 100);
    map.set('a', 1, 0);
    map.peek('a');
    map.sweep(200);
    assert.deepEqual(evicted, [['a', 1, 'idle']]);
  });

  test('sweep with nothing idle evicts nothing; sweep of an empty map is fine', () => {
    const { map, evicted } = make(10, 100);
    map.sweep(1_000_000);
    map.set('a', 1, 1000);
    map.sweep(1001);
    assert.deepEqual(evicted, []);
    assert.equal(map.size, 1);
  });

  test('sweep can evict everything', () => {
    const { map, evicted } = make(10, 100);
    for (let i = 0; i < 5; i++) map.set(`k${i}`, i, i);
    map.sweep(10_000);
    assert.equal(map.size, 0);
    assert.deepEqual(
      evicted.map(([k, , why]) => `${k}:${why}`),
      ['k0:idle', 'k1:idle', 'k2:idle', 'k3:idle', 'k4:idle'],
    );
  });

  test('a deleted entry is not reported by a later sweep', () => {
    const { map, evicted } = make(10, 100);
    map.set('a', 1, 0);
    map.delete('a');
    map.sweep(1000);
    assert.deepEqual(evicted, []);
  });
});
