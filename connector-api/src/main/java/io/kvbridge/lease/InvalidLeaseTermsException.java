package io.kvbridge.lease;

import java.util.Objects;

/**
 * Lease terms no lease can be granted under. {@link #term()} says which term is wrong and {@link
 * #problem()} how, so whoever read the terms from configuration can name its own setting.
 */
public class InvalidLeaseTermsException extends IllegalArgumentException {

  private static final long serialVersionUID = 1L;

  /** The terms of {@link LeaseTerms}. */
  public enum Term {
    /** {@link LeaseTerms#duration()}. */
    DURATION,
    /** {@link LeaseTerms#maxLifetime()}. */
    MAX_LIFETIME
  }

  private final Term term;
  private final String problem;

  /**
   * A refusal of {@code term}.
   *
   * @param term the wrong term
   * @param problem what is wrong, without the term's name, e.g. {@code (0s) must be positive}
   */
  public InvalidLeaseTermsException(Term term, String problem) {
    super((term == Term.DURATION ? "lease duration " : "lease max lifetime ") + problem);
    this.term = Objects.requireNonNull(term, "term");
    this.problem = problem;
  }

  /** The wrong term. */
  public Term term() {
    return term;
  }

  /** The message without the term's name: the value and what is accepted. */
  public String problem() {
    return problem;
  }
}
