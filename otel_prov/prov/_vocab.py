"""The PROV-O and ``oprov`` terms the mapper writes, as ready N-Triples IRI terms.

Every ``oprov`` term here is declared in ``semconv/ontology.ttl``; a test checks it.
"""

from __future__ import annotations

from otel_prov.prov._rdf import OPROV, PPLAN, PROV, RDF_TYPE, RDFS

__all__ = ["ALL_OPROV_TERMS", "PP", "RDFS_LABEL", "RDF_TYPE", "O", "P"]

RDFS_LABEL = f"<{RDFS}label>"


class P:
    """PROV-O terms."""

    Activity = f"<{PROV}Activity>"
    Entity = f"<{PROV}Entity>"
    Agent = f"<{PROV}Agent>"
    SoftwareAgent = f"<{PROV}SoftwareAgent>"
    startedAtTime = f"<{PROV}startedAtTime>"
    endedAtTime = f"<{PROV}endedAtTime>"
    generatedAtTime = f"<{PROV}generatedAtTime>"
    used = f"<{PROV}used>"
    wasGeneratedBy = f"<{PROV}wasGeneratedBy>"
    wasDerivedFrom = f"<{PROV}wasDerivedFrom>"
    wasInformedBy = f"<{PROV}wasInformedBy>"
    wasAssociatedWith = f"<{PROV}wasAssociatedWith>"
    wasAttributedTo = f"<{PROV}wasAttributedTo>"
    value = f"<{PROV}value>"
    Bundle = f"<{PROV}Bundle>"
    wasRevisionOf = f"<{PROV}wasRevisionOf>"
    qualifiedStart = f"<{PROV}qualifiedStart>"
    Start = f"<{PROV}Start>"
    hadActivity = f"<{PROV}hadActivity>"
    atTime = f"<{PROV}atTime>"
    Plan = f"<{PROV}Plan>"
    Association = f"<{PROV}Association>"
    qualifiedAssociation = f"<{PROV}qualifiedAssociation>"
    agent = f"<{PROV}agent>"
    hadPlan = f"<{PROV}hadPlan>"
    hadPrimarySource = f"<{PROV}hadPrimarySource>"


class PP:
    """P-Plan terms (http://purl.org/net/p-plan#): a plan's steps and their order."""

    Step = f"<{PPLAN}Step>"
    isStepOfPlan = f"<{PPLAN}isStepOfPlan>"
    isPrecededBy = f"<{PPLAN}isPrecededBy>"


class O:  # noqa: E742 - short on purpose: the mapper reads like Turtle
    """``oprov`` terms (https://w3id.org/otel-prov/ns#)."""

    AgentSession = f"<{OPROV}AgentSession>"
    Iteration = f"<{OPROV}Iteration>"
    ToolCall = f"<{OPROV}ToolCall>"
    ModelCall = f"<{OPROV}ModelCall>"
    Retrieval = f"<{OPROV}Retrieval>"
    Span = f"<{OPROV}Span>"
    Question = f"<{OPROV}Question>"
    Thought = f"<{OPROV}Thought>"
    Arguments = f"<{OPROV}Arguments>"
    Observation = f"<{OPROV}Observation>"
    Answer = f"<{OPROV}Answer>"
    Query = f"<{OPROV}Query>"
    Document = f"<{OPROV}Document>"
    AIAgent = f"<{OPROV}AIAgent>"
    Tool = f"<{OPROV}Tool>"
    AIModel = f"<{OPROV}AIModel>"
    Service = f"<{OPROV}Service>"
    Evaluation = f"<{OPROV}Evaluation>"
    Evaluator = f"<{OPROV}Evaluator>"
    Annotation = f"<{OPROV}Annotation>"
    evaluationName = f"<{OPROV}evaluationName>"
    score = f"<{OPROV}score>"
    scoreLabel = f"<{OPROV}scoreLabel>"
    explanation = f"<{OPROV}explanation>"
    evaluates = f"<{OPROV}evaluates>"
    Postcondition = f"<{OPROV}Postcondition>"
    stepNumber = f"<{OPROV}stepNumber>"
    stepOutcome = f"<{OPROV}stepOutcome>"
    planStep = f"<{OPROV}planStep>"
    satisfied = f"<{OPROV}satisfied>"
    detail = f"<{OPROV}detail>"
    traceId = f"<{OPROV}traceId>"
    spanId = f"<{OPROV}spanId>"
    parentSpanId = f"<{OPROV}parentSpanId>"
    partOf = f"<{OPROV}partOf>"
    remoteParent = f"<{OPROV}remoteParent>"
    serviceName = f"<{OPROV}serviceName>"
    status = f"<{OPROV}status>"
    errorType = f"<{OPROV}errorType>"
    errorMessage = f"<{OPROV}errorMessage>"
    iterationNumber = f"<{OPROV}iterationNumber>"
    action = f"<{OPROV}action>"
    toolName = f"<{OPROV}toolName>"
    toolCallId = f"<{OPROV}toolCallId>"
    sessionId = f"<{OPROV}sessionId>"
    agentName = f"<{OPROV}agentName>"
    agentLabel = f"<{OPROV}agentLabel>"
    modelName = f"<{OPROV}modelName>"
    providerName = f"<{OPROV}providerName>"
    inputTokens = f"<{OPROV}inputTokens>"
    outputTokens = f"<{OPROV}outputTokens>"
    cacheReadTokens = f"<{OPROV}cacheReadTokens>"
    cacheWriteTokens = f"<{OPROV}cacheWriteTokens>"
    reasoningTokens = f"<{OPROV}reasoningTokens>"
    costAmount = f"<{OPROV}costAmount>"
    costCurrency = f"<{OPROV}costCurrency>"
    costSource = f"<{OPROV}costSource>"
    bundleOf = f"<{OPROV}bundleOf>"
    contentHash = f"<{OPROV}contentHash>"
    canonicalization = f"<{OPROV}canonicalization>"
    manifest = f"<{OPROV}manifest>"
    exporterVersion = f"<{OPROV}exporterVersion>"
    previousBundle = f"<{OPROV}previousBundle>"
    previousHash = f"<{OPROV}previousHash>"
    byteSize = f"<{OPROV}byteSize>"
    mediaType = f"<{OPROV}mediaType>"
    contentLocation = f"<{OPROV}contentLocation>"
    truncated = f"<{OPROV}truncated>"
    failedCalls = f"<{OPROV}failedCalls>"
    runStartedAt = f"<{OPROV}runStartedAt>"
    declaredTool = f"<{OPROV}declaredTool>"
    dataSourceId = f"<{OPROV}dataSourceId>"
    documentId = f"<{OPROV}documentId>"
    rank = f"<{OPROV}rank>"
    retrievalScore = f"<{OPROV}retrievalScore>"
    documentMetadata = f"<{OPROV}documentMetadata>"


ALL_OPROV_TERMS = tuple(
    value[1 + len(OPROV) : -1] for name, value in vars(O).items() if not name.startswith("_")
)
"""Local names of every ``oprov`` term above (for the ontology test)."""
