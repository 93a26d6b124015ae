package io.kvbridge.sample.completions;

import com.fasterxml.jackson.annotation.JsonProperty;
import io.kvbridge.sample.engine.ToyModel;
import java.util.List;

/**
 * The answer of {@code GET /v1/models}, in OpenAI's list shape: the one model the sample serves.
 *
 * @param object always {@code list}
 * @param data the models
 */
public record ModelList(String object, List<Model> data) {

  /** Copies the models. */
  public ModelList {
    data = List.copyOf(data);
  }

  /** The toy model, {@value ToyModel#NAME}. */
  public static ModelList toy() {
    return new ModelList("list", List.of(new Model(ToyModel.NAME, "model", 0L, "kvbridge")));
  }

  /**
   * One model.
   *
   * @param id its name
   * @param object always {@code model}
   * @param created seconds since the epoch; 0, the toy model has no release date
   * @param ownedBy who provides it
   */
  public record Model(
      String id, String object, long created, @JsonProperty("owned_by") String ownedBy) {}
}
