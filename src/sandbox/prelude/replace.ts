/*
 * How a guard takes the place of a built-in: with the native's length and property attributes, so only
 * what the guard refuses tells it from the native.
 */
import {
  defineProperty,
  G,
  getOwnPropertyDescriptor,
  getOwnPropertyNames,
  objectKeys,
  SymbolSpecies,
} from './intrinsics.ts';

/** A method whose `this` and arguments are whatever the caller passes. */
// biome-ignore lint/suspicious/noExplicitAny: a guard stands for a native of any signature
export type AnyMethod = (this: any, ...args: any[]) => any;

/**
 * Puts `guarded` in place of the method `key` of `owner` whose descriptor is `d`: same length, same
 * attributes.
 */
export function replaceMethod(
  owner: object,
  key: PropertyKey,
  d: PropertyDescriptor,
  guarded: AnyMethod,
): void {
  defineProperty(guarded, 'length', { value: (d.value as AnyMethod).length });
  defineProperty(owner, key, {
    value: guarded,
    writable: d.writable === true,
    enumerable: d.enumerable === true,
    configurable: d.configurable === true,
  });
}

/**
 * Makes `guarded` the global constructor `name` in place of `native`: the native's statics (species
 * included) and length, the same prototype object (so instances and `instanceof` are unchanged), whose
 * `constructor` now names the guard.
 */
export function replaceConstructor(
  name: string,
  native: { readonly prototype: object; readonly length: number },
  guarded: AnyMethod,
): void {
  const statics = getOwnPropertyNames(native);
  for (let i = 0; i < statics.length; i++) {
    const key = statics[i]!;
    if (key === 'prototype' || key === 'length' || key === 'name') continue;
    defineProperty(guarded, key, getOwnPropertyDescriptor(native, key)!);
  }
  defineProperty(guarded, 'length', { value: native.length });
  defineProperty(guarded, SymbolSpecies, getOwnPropertyDescriptor(native, SymbolSpecies)!);
  defineProperty(guarded, 'prototype', {
    value: native.prototype,
    writable: false,
    enumerable: false,
    configurable: false,
  });
  defineProperty(native.prototype, 'constructor', {
    value: guarded,
    writable: true,
    enumerable: false,
    configurable: true,
  });
  defineProperty(G, name, {
    value: guarded,
    writable: true,
    enumerable: false,
    configurable: true,
  });
}

/**
 * Defines each of `values` as a non-enumerable global: read-only and fixed (the model's helpers), or
 * writable and configurable like an ordinary global (the web APIs). Runs before any model code.
 */
export function defineGlobals(values: Record<string, unknown>, fixed: boolean): void {
  const names = objectKeys(values);
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!;
    defineProperty(G, name, {
      value: values[name],
      writable: !fixed,
      enumerable: false,
      configurable: !fixed,
    });
  }
}
