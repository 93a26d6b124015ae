package io.kvbridge.tck.schedule;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.spi.TransportProvider;
import java.util.ArrayList;
import java.util.List;

/** A rank of D, named by its engine id, reading from a rank of P. */
record Link(String decoderId, int decoderRank, int producerRank) {

  /**
   * D's rank {@code decoderRank} reading from the {@code source}-th of the P ranks holding its
   * heads, each modulo what there is in {@code shape}, under D's engine id {@code decoderId}.
   */
  static Link of(Shape shape, String decoderId, int decoderRank, int source) {
    int d = decoderRank % shape.decoderTp();
    KvLayout mine = shape.decoderLayouts().get(d);
    List<KvLayout> producerLayouts = shape.producerLayouts();
    List<Integer> sources = new ArrayList<>();
    for (int q = 0; q < shape.producerTp(); q++) {
      KvLayout theirs = producerLayouts.get(q);
      if (theirs.headStart() < mine.headStart() + mine.headCount()
          && mine.headStart() < theirs.headStart() + theirs.headCount()) {
        sources.add(q);
      }
    }
    return new Link(decoderId, d, sources.get(source % sources.size()));
  }

  String decoderAgent() {
    return TransportProvider.agentName(decoderId, decoderRank);
  }

  String producerAgent() {
    return TransportProvider.agentName(ProducerEngine.ID, producerRank);
  }
}
