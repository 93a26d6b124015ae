/**
 * Time as a dependency: every deadline in kvbridge is read from a {@link
 * io.kvbridge.time.MonotonicClock}, so tests move a {@link io.kvbridge.time.ManualClock} instead of
 * sleeping, and durations in configuration read as {@link io.kvbridge.time.DurationText}.
 */
package io.kvbridge.time;
