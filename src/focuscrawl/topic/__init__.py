"""Topics: what a user's topic means to the agent. Word vectors, keyword expansion, tokenisers, topic
directories and the relevance classifiers whose verdict is the agent's reward."""
