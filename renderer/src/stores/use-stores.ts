import { createContext, useContext } from 'react';
import { useStore, type StoreApi } from 'zustand';
import type { AppStores } from './app-stores';

/** The window's slices, provided once at the root. */
export const StoresContext = createContext<AppStores | null>(null);

/** The window's slices (inside the provider). */
export function useStores(): AppStores {
  const stores = useContext(StoresContext);
  if (!stores) throw new Error('useStores outside <StoresContext.Provider>');
  return stores;
}

// zustand's overloads do not infer through the indexed slice type; this is the overload we use.
const selectFrom = useStore as <T, U>(api: StoreApi<T>, selector: (state: T) => U) => U;

type StateOf<S> = S extends StoreApi<infer T> ? T : never;

/** Selects narrowly from one slice: `useSlice('stepper', (s) => s.rows)`. */
export function useSlice<K extends Exclude<keyof AppStores, 'start' | 'dispose'>, U>(
  key: K,
  selector: (state: StateOf<AppStores[K]>) => U,
): U {
  const store = useStores()[key] as unknown as StoreApi<StateOf<AppStores[K]>>;
  return selectFrom(store, selector);
}
