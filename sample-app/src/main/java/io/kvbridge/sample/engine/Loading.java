package io.kvbridge.sample.engine;

import java.util.List;

/**
 * A request whose KV is being loaded into its blocks: tokens {@code [firstToken, firstToken +
 * loadedTokens)}; the ones before were copied from the prefix cache.
 */
record Loading(PendingRequest pending, List<Integer> blocks, int firstToken, int loadedTokens) {}
