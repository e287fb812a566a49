"""PersonalAI's retrieval (`../shared/papers/personalai.md`): a hypergraph of entity nodes
joined by thesis and episodic hyperedges, traversed by A*, WaterCircles and BeamSearch,
whose retrieved hyperedges are filtered by similarity to the question."""
