"""A seeded generator of synthetic collections in the sample corpus's style, for build benchmarks.

`kgmem bench build` needs collections of thousands of documents whose entities and facts
are distinct (not the sample files repeated), written in sentences the pipeline's own
extractors turn into facts: spaCy NER plus the entity ruler (`transforms.entity_patterns`)
and the dependency patterns of `transforms.relations`. Every template below was checked
against both (e.g. "Anna Becker works at the Amber Quay Office." -> `work_at`, "Lucas
Ferreira is the CEO of Norvale Industries." -> `ceo_of`, "Error NC-1042 is an error on the
Corvid 2150." -> `error_on`); the tests build a small collection and find the facts.

World (all names invented by combination, none from the sample corpus):
- companies, one per `DOCS_PER_COMPANY` (11) documents: a unique syllable stem plus a
  suffix ("Norvale Industries"); each has 8 people (founder, two successive CEOs, two team
  leads, an engineer who moves, a support agent, a customer), two offices ("the Amber Quay
  Office", each located in a city), two teams named after the company ("Norvale
  Firmware"), two products ("Corvid 2150") with one error code each ("NC-1042").
- Documents of a company, in date order (one `DOC_KINDS` entry each): profile (founded
  by, CEO of), two office openings (located in, based at), two team-lead profiles (works
  at, leads), an engineer profile (works at, lives in), a product launch (launched,
  designed), an incident (error on), a CEO change (a new CEO of the same company:
  a temporal update), a relocation (moved to, works at another office: updates), a second
  launch. Each body adds 4-7 filler sentences without entities (60-200 words, like the
  sample), drawn from fixed pools by the document's own seeded RNG.
- Conversations (support threads, the sample's JSON layout): a customer reports a
  product's error code to the company's agent, states where they live and work ("I live in
  Lyon and I work at ..."), and in a later session moves ("I moved to ...").

Distinctness: people, stems, offices, products and codes are indexed by company and slot
and mapped to names through a seeded affine bijection of each name space (first name x
surname, landmark x feature, ...), so two slots never share a name; cities come from a
list of real cities shared by many offices (cities are hubs, as in real collections).
Determinism: every document and conversation draws from `random.Random(f"{seed}:{kind}:{i}")`,
so document `i` is the same whatever else is generated, and `range(n, n + k)` appends new
documents to an existing folder (what the 1 % re-run of the benchmark does).
Capacity: `max_documents()` (about 20,000 documents with these pools); more raises.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path

DOCS_PER_COMPANY = 11
PEOPLE_PER_COMPANY = 8
FOUNDER, CEO, NEW_CEO, LEAD_A, LEAD_B, ENGINEER, AGENT, CUSTOMER = range(PEOPLE_PER_COMPANY)
DOC_KINDS = ("profile", "office-a", "office-b", "lead-a", "lead-b", "engineer", "launch-a",
             "incident", "ceo-change", "relocation", "launch-b")  # fmt: skip
CONVERSATION_EVERY = 50
"""Default: one conversation log per this many documents (at least one)."""

FIRST_NAMES = (
    "Anna", "Daniel", "Lucas", "Ingrid", "Rahul", "Yuki", "Maria", "Erik", "Sofia", "James",
    "Amara", "Mateo", "Hannah", "Kenji", "Fatima", "Noah", "Elena", "Omar", "Clara", "Victor",
    "Aisha", "Jonas", "Camila", "Henrik", "Leila", "Diego", "Nora", "Samuel", "Mei", "Adrian",
    "Zara", "Felix", "Olivia", "Tariq", "Greta", "Pablo", "Naomi", "Stefan", "Lina", "Hugo",
    "Ayesha", "Martin", "Chloe", "Arjun", "Julia", "Kofi", "Emma", "Ravi", "Sara", "Thomas",
    "Ines", "Mikhail", "Alice", "Jorge", "Freya", "Hassan", "Lucia", "Peter", "Nadia", "Carlos",
    "Ruth", "Andre", "Maya", "Karl", "Isabel", "Ahmed", "Lena", "Simon", "Rosa", "David",
    "Keiko", "Luis", "Astrid", "Emeka", "Paula", "Viktor", "Irene", "Tobias", "Alma", "Ivan",
    "Grace", "Rohan", "Marta", "Niklas", "Selin", "Bruno", "Eva", "Kwame", "Ana", "George",
    "Hiroshi", "Lara", "Malik", "Jana", "Oscar", "Rania", "Paul", "Chiara", "Ben", "Wanjiru",
    "Anton", "Dalia", "Mario", "Helga", "Jin", "Teresa", "Yusuf", "Agnes", "Rui", "Edith",
    "Karim", "Vera", "Lorenzo", "Ida", "Kai", "Beatriz", "Omari", "Ruby", "Sven", "Leah",
    "Andrei", "Nina", "Marco", "Hilda", "Farid", "Elsa", "Matteo", "Amelia", "Emil", "Jade",
)  # fmt: skip
SURNAMES = (
    "Becker", "Okoro", "Ferreira", "Halvorsen", "Mehta", "Tanaka", "Lopez", "Lund", "Novak",
    "Schmidt", "Adeyemi", "Costa", "Fischer", "Yamamoto", "Haddad", "Larsen", "Petrov",
    "Rossi", "Nakamura", "Silva", "Andersen", "Mensah", "Weber", "Kumar", "Dubois", "Jansen",
    "Ivanova", "Moretti", "Hoffmann", "Santos", "Eriksson", "Osei", "Keller", "Sharma",
    "Laurent", "Visser", "Kovacs", "Romano", "Bauer", "Pereira", "Nilsson", "Owusu", "Wagner",
    "Gupta", "Moreau", "Bakker", "Horvat", "Ricci", "Richter", "Oliveira", "Johansson",
    "Asante", "Schulz", "Reddy", "Fontaine", "Smit", "Varga", "Greco", "Krause", "Almeida",
    "Lindqvist", "Boateng", "Zimmermann", "Iyer", "Girard", "Meijer", "Toth", "Marino",
    "Hartmann", "Carvalho", "Berglund", "Nkemelu", "Braun", "Nair", "Lefebvre", "Dekker",
    "Szabo", "Colombo", "Vogel", "Ribeiro", "Holm", "Achebe", "Neumann", "Rao", "Mercier",
    "Vos", "Molnar", "Bruno", "Schwarz", "Araujo", "Sandberg", "Adjei", "Wolf", "Pillai",
    "Bonnet", "Mulder", "Farkas", "Gallo", "Lange", "Teixeira", "Forsberg", "Eze", "Frank",
    "Menon", "Rousseau", "Kuiper", "Balogh", "Conti", "Sommer", "Barros", "Dahl", "Adebayo",
    "Werner", "Joshi", "Chevalier", "Brouwer", "Kiss", "Esposito", "Walter", "Rocha",
    "Strand", "Nwosu", "Kraus", "Desai", "Blanc", "Hendriks", "Papp", "Ferrari", "Peters",
    "Correia", "Ekstrom", "Danso", "Hahn", "Bhat", "Garnier", "Postma", "Lakatos", "Rinaldi",
    "Seidel", "Moura", "Aberg", "Ofori", "Berger", "Kapoor", "Roux", "Veenstra", "Bognar",
    "Fabbri", "Kuhn", "Cardoso", "Wikstrom", "Obi", "Jung", "Saxena", "Perrin", "Smits",
    "Nemeth", "Marchetti", "Fuchs", "Lima", "Holmberg", "Ansah", "Roth", "Chopra", "Fournier",
)  # fmt: skip
STEM_HEADS = (
    "Nor", "Vel", "Quar", "Bris", "Tal", "Mar", "Ost", "Kel", "Dra", "Hal", "Sel", "Cor",
    "Vant", "Lum", "Tor", "Ber", "Fal", "Gren", "Ald", "Mor", "Pell", "Rav", "Sten", "Cal",
    "Wex", "Yar", "Zen", "Orn", "Bel", "Dun", "Fen", "Hask", "Jor", "Kip", "Lor", "Mab",
    "Nev", "Pav", "Quin", "Rud", "Sor", "Trev", "Ulm", "Vos", "Wil", "Xan", "Ysel", "Zor",
)  # fmt: skip
STEM_TAILS = (
    "vale", "mora", "rin", "olt", "ex", "ara", "feld", "wick", "ton", "ion", "dex", "ora",
    "tis", "ava", "gard", "ley", "more", "stad", "ium", "era", "ock", "ine", "aro", "quist",
    "berg", "ence", "ova", "mont", "ric", "yth", "ander", "ella", "orp", "ust", "elle", "aven",
    "ivo", "anta", "ott", "ux",
)  # fmt: skip
COMPANY_SUFFIXES = ("Industries", "Systems", "Labs", "Devices", "Instruments", "Technologies")
LANDMARKS = (
    "Amber", "Willow", "Harbor", "Cedar", "Falcon", "Granite", "Heron", "Ivy", "Juniper",
    "Kestrel", "Larch", "Meadow", "Northwind", "Oakridge", "Pine", "Quarry", "Raven", "Silver",
    "Thistle", "Upland", "Vista", "Westbrook", "Alder", "Beacon", "Copper", "Driftwood",
    "Elm", "Fern", "Glen", "Hawthorn", "Iron", "Jasper", "Kingfisher", "Lantern", "Maple",
    "Nettle", "Orchard", "Pebble", "Quill", "Rowan", "Saffron", "Timber", "Umber", "Violet",
    "Wren", "Yew", "Ash", "Birch", "Cobalt", "Dune", "Ember", "Flint", "Garnet", "Hollow",
    "Indigo", "Lark", "Moss", "Onyx", "Poplar", "Ridge", "Slate", "Tern", "Bramble", "Crescent",
    "Dawn", "Eagle", "Foxglove", "Gull", "Hazel", "Kite", "Lotus", "Marble", "Osprey",
    "Pearl", "Reed", "Sparrow", "Tide", "Wolf", "Briar", "Clover",
)  # fmt: skip
FEATURES = (
    "Quay", "Gate", "Point", "Park", "Court", "Square", "Yard", "Wharf", "Crossing", "Hill",
    "Bridge", "Row", "Field", "Green", "Lane", "Terrace", "Works", "Mill", "Harbour", "Plaza",
    "Heights", "Landing", "Commons", "Basin", "Dock", "Market", "Circle", "Place", "Walk",
    "Hall", "House", "Tower", "Center", "Campus", "Junction", "Pier", "Station", "Row East",
    "Hill North", "Park West",
)  # fmt: skip
PRODUCT_WORDS = (
    "Corvid", "Tessal", "Brisolt", "Aurex", "Pennon", "Quillon", "Lumetra", "Vantor", "Zephra",
    "Orbis", "Kalmar", "Strata", "Novell", "Ferro", "Halcyon", "Inkara", "Jetstar", "Kyra",
    "Lexor", "Mistral", "Nimbus", "Opalis", "Paxton", "Rivo", "Solace", "Tundra", "Ultrix",
    "Veloce", "Wyvern", "Xelta", "Yonder", "Zircon", "Axiom", "Bolero", "Cadence", "Delta",
    "Eclipse", "Fable", "Gambit", "Helix",
)  # fmt: skip
DISCIPLINES = ("Firmware", "Optics", "Robotics", "Imaging", "Materials", "Acoustics",
               "Sensors", "Mechanics", "Software", "Electronics")  # fmt: skip
CITIES = (
    "Lyon", "Porto", "Gdansk", "Valencia", "Tallinn", "Bergen", "Antwerp", "Seville",
    "Krakow", "Bologna", "Utrecht", "Gothenburg", "Marseille", "Bilbao", "Leipzig", "Graz",
    "Brno", "Aarhus", "Turin", "Nantes", "Osaka", "Pune", "Nairobi", "Accra", "Lagos",
    "Montreal", "Denver", "Austin", "Portland", "Seattle", "Melbourne", "Auckland", "Santiago",
    "Lima", "Bogota", "Monterrey", "Curitiba", "Cordoba", "Kyoto", "Busan", "Taipei", "Hanoi",
    "Manila", "Chennai", "Casablanca", "Tunis", "Cairo", "Izmir", "Athens", "Sofia",
    "Bucharest", "Budapest", "Vienna", "Zurich", "Geneva", "Hamburg", "Dublin", "Glasgow",
    "Edinburgh", "Cardiff", "Belfast", "Oslo", "Helsinki", "Riga", "Vilnius", "Ljubljana",
    "Zagreb", "Belgrade", "Vancouver", "Calgary", "Ottawa", "Boise", "Phoenix", "Atlanta",
    "Houston", "Dallas", "Miami", "Detroit", "Pittsburgh", "Adelaide", "Perth", "Brisbane",
)  # fmt: skip
CATEGORIES = ("label printers", "document scanners", "industrial sensors", "barcode readers",
              "laser engravers", "thermal cameras", "desktop plotters", "lab balances")  # fmt: skip
FAULTS = ("a paper feed fault", "a sensor calibration fault", "a motor stall",
          "a checksum failure", "an overheating warning", "a lid switch fault")  # fmt: skip
FILLER = (
    "The building has {n} floors of open workspace and a small test lab.",
    "About {n}0 employees are expected to work at the site by the end of the year.",
    "Visitors should use the main entrance and sign in at the reception desk.",
    "The team reviews field reports every Monday and publishes a short summary.",
    "Customers asked for quieter machines, longer service intervals and simpler menus.",
    "The launch event was streamed to resellers in {n} countries.",
    "A spare parts warehouse next door keeps the most common parts in stock.",
    "The new design uses {n}0 percent recycled plastic in its outer case.",
    "Support staff received {n} days of training before the release.",
    "Early reviews praised the setup process and the clear status display.",
    "The company plans to publish a maintenance guide later this year.",
    "Engineers ran the prototypes for {n} weeks in a climate chamber.",
    "A small canteen on the ground floor serves lunch on weekdays.",
    "Outside work, the team organises a monthly board game evening.",
    "Orders placed before the end of the month ship within {n} working days.",
    "The service manual describes every step with photographs.",
    "Internal tests showed fewer jams than the previous generation.",
    "The firmware can be updated over the network or from a memory stick.",
    "Managers said the move would shorten travel for most of the staff.",
    "The annual report lists {n} new patents filed this year.",
)  # fmt: skip


@dataclass(frozen=True)
class Fact:
    """A fact a document states, as the extractors name it (raw relation, before aliases)."""

    head: str
    relation: str
    tail: str


@dataclass(frozen=True)
class GeneratedDocument:
    """One Markdown document: its file name, text and the facts its sentences state."""

    index: int
    filename: str
    title: str
    day: date
    body: str
    facts: tuple[Fact, ...] = field(default_factory=tuple)

    @property
    def text(self) -> str:
        return f"---\ntitle: {self.title}\ndate: {self.day.isoformat()}\n---\n{self.body}\n"


@dataclass(frozen=True)
class GeneratedConversation:
    """One support conversation in the sample's JSON layout, with the facts it states."""

    index: int
    filename: str
    record: dict[str, object]
    facts: tuple[Fact, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class Company:
    """The named things of one company (see the module docstring)."""

    index: int
    name: str
    stem: str
    category: str
    people: tuple[str, ...]
    offices: tuple[str, str]
    cities: tuple[str, str, str]
    teams: tuple[str, str]
    products: tuple[str, str]
    codes: tuple[str, str]
    faults: tuple[str, str]
    founded: date


def _bijection(seed: int, space: int, salt: str) -> tuple[int, int]:
    """(a, b) with gcd(a, space) == 1: i -> (a*i + b) % space permutes range(space)."""
    rng = random.Random(f"{seed}:bijection:{salt}")
    while True:
        a = rng.randrange(1, space)
        if math.gcd(a, space) == 1:
            return a, rng.randrange(space)


class CorpusGenerator:
    """Documents and conversations of a synthetic collection, deterministic for a seed."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        spaces = {
            "person": len(FIRST_NAMES) * len(SURNAMES),
            "stem": len(STEM_HEADS) * len(STEM_TAILS),
            "office": len(LANDMARKS) * len(FEATURES),
        }
        self._perm = {
            kind: (space, *_bijection(seed, space, kind)) for kind, space in spaces.items()
        }

    @staticmethod
    def max_documents() -> int:
        """Documents the name pools can keep distinct (companies are the binding limit)."""
        companies = min(
            len(FIRST_NAMES) * len(SURNAMES) // PEOPLE_PER_COMPANY,
            len(STEM_HEADS) * len(STEM_TAILS),
            len(LANDMARKS) * len(FEATURES) // 2,
        )
        return companies * DOCS_PER_COMPANY

    def _slot(self, kind: str, index: int) -> int:
        space, a, b = self._perm[kind]
        if index >= space:
            raise ValueError(
                f"the {kind} name pool holds {space} names; the generator is limited to "
                f"{self.max_documents():,} documents"
            )
        return (a * index + b) % space

    def _person(self, index: int) -> str:
        slot = self._slot("person", index)
        return f"{FIRST_NAMES[slot % len(FIRST_NAMES)]} {SURNAMES[slot // len(FIRST_NAMES)]}"

    def company(self, index: int) -> Company:
        """The company behind documents `index * DOCS_PER_COMPANY ...`."""
        rng = random.Random(f"{self.seed}:company:{index}")
        slot = self._slot("stem", index)
        stem = STEM_HEADS[slot % len(STEM_HEADS)] + STEM_TAILS[slot // len(STEM_HEADS)]
        offices = []
        for k in range(2):
            o = self._slot("office", 2 * index + k)
            offices.append(f"{LANDMARKS[o % len(LANDMARKS)]} {FEATURES[o // len(LANDMARKS)]}")
        teams = rng.sample(DISCIPLINES, 2)
        products = tuple(
            f"{PRODUCT_WORDS[p % len(PRODUCT_WORDS)]} {1000 + 10 * (p // len(PRODUCT_WORDS))}"
            for p in (2 * index, 2 * index + 1)
        )
        initials = stem[:1] + rng.choice("ABCDEFGHKLMNPRSTVXZ")
        return Company(
            index=index,
            name=f"{stem} {rng.choice(COMPANY_SUFFIXES)}",
            stem=stem,
            category=rng.choice(CATEGORIES),
            people=tuple(self._person(index * PEOPLE_PER_COMPANY + s) for s in range(8)),
            offices=(offices[0], offices[1]),
            cities=tuple(rng.sample(CITIES, 3)),  # type: ignore[arg-type]
            teams=(f"{stem} {teams[0]}", f"{stem} {teams[1]}"),
            products=products,  # type: ignore[arg-type]
            codes=(f"{initials}-{100 + 2 * index}", f"{initials}-{101 + 2 * index}"),
            faults=tuple(rng.sample(FAULTS, 2)),  # type: ignore[arg-type]
            founded=date(2010, 1, 1) + timedelta(days=rng.randrange(2500)),
        )

    def document(self, index: int) -> GeneratedDocument:
        """Document `index`: kind `DOC_KINDS[index % 11]` of company `index // 11`."""
        c = self.company(index // DOCS_PER_COMPANY)
        kind = DOC_KINDS[index % DOCS_PER_COMPANY]
        rng = random.Random(f"{self.seed}:document:{index}")
        day = c.founded + timedelta(days=120 * (index % DOCS_PER_COMPANY) + rng.randrange(60))
        title, sentences, facts = _DOCUMENTS[kind](c)
        filler = [s.format(n=rng.randrange(2, 10)) for s in rng.sample(FILLER, rng.randint(4, 7))]
        half = len(filler) // 2
        body = " ".join(sentences) + "\n\n" + " ".join(filler[:half]) + "\n\n"
        body += " ".join(filler[half:])
        name = f"{day.isoformat()}-{index:06d}-{c.stem.lower()}-{kind}.md"
        return GeneratedDocument(index, name, title, day, body, tuple(facts))

    def conversation(self, index: int, companies: int) -> GeneratedConversation:
        """Support conversation `index`, about one of the first `companies` companies."""
        rng = random.Random(f"{self.seed}:conversation:{index}")
        c = self.company((index * 4) % max(companies, 1))
        customer, agent = c.people[CUSTOMER], c.people[AGENT]
        product, code, fault = c.products[0], c.codes[0], c.faults[0]
        home, new_home = c.cities[2], CITIES[(CITIES.index(c.cities[2]) + 11) % len(CITIES)]
        employer = self.company((index * 4 + 1) % max(companies, 1)).name
        desk = f"{c.stem} Support"
        first = f"{customer.split()[0]}"
        started = datetime(2020, 1, 6, 9, 0) + timedelta(days=c.founded.toordinal() % 1200)
        sessions = [
            [
                (customer, f"Hello, my {product} shows error {code} and stops after a few pages."),
                (
                    desk,
                    f"Hi {first}, this is {agent} from {desk}. Error {code} is an error on "
                    f"the {product}. It means {fault}. Could you tell me the serial number?",
                ),
                (
                    customer,
                    f"The serial number is {rng.randrange(10**5, 10**6)}. "
                    f"I live in {home} and I work at {employer}.",
                ),
                (
                    desk,
                    "Thank you. I am sending a replacement part today. It should arrive "
                    "within three working days.",
                ),
            ],
            [
                (
                    customer,
                    f"The part arrived and the {product} works again. "
                    f"By the way, I moved to {new_home} last month.",
                ),
                (desk, "Great to hear. I have updated your address and closed the ticket."),
            ],
        ]
        record_sessions, turn_time = [], started
        for s, turns in enumerate(sessions, 1):
            turn_time += timedelta(days=9 * (s - 1))
            rows = []
            for t, (speaker, text) in enumerate(turns, 1):
                turn_time += timedelta(minutes=2 + rng.randrange(4))
                stamp = turn_time.strftime("%Y-%m-%dT%H:%M:%SZ")
                rows.append({"turn_id": f"S{s}:{t}", "speaker": speaker, "text": text,
                             "timestamp": stamp})  # fmt: skip
            record_sessions.append(
                {"session_id": f"S{s}", "started_at": rows[0]["timestamp"], "turns": rows}
            )
        record = {
            "conversation_id": f"support-{index:05d}",
            "title": f"{product} support thread",
            "sessions": record_sessions,
        }
        facts = (
            Fact(code, "error_on", product),
            Fact(customer, "live_in", home),
            Fact(customer, "work_at", employer),
            Fact(customer, "move_to", new_home),
        )
        return GeneratedConversation(index, f"support-{index:05d}.json", record, facts)

    def documents(self, indices: Iterable[int]) -> list[GeneratedDocument]:
        return [self.document(i) for i in indices]

    def write(
        self,
        folder: Path,
        documents: Sequence[int] | range,
        conversations: Sequence[int] | range = (),
        companies: int | None = None,
    ) -> list[Path]:
        """Write documents (as `documents/*.md`) and conversations (`conversations/*.json`)
        with the given indices under `folder`; returns the written paths."""
        docs_dir, conv_dir = folder / "documents", folder / "conversations"
        docs_dir.mkdir(parents=True, exist_ok=True)
        written = []
        for doc in self.documents(documents):
            path = docs_dir / doc.filename
            path.write_text(doc.text, encoding="utf-8")
            written.append(path)
        if conversations:
            conv_dir.mkdir(parents=True, exist_ok=True)
        n_companies = companies or companies_of(max(documents, default=0) + 1)
        for index in conversations:
            conv = self.conversation(index, n_companies)
            path = conv_dir / conv.filename
            path.write_text(json.dumps(conv.record, indent=2, ensure_ascii=False), "utf-8")
            written.append(path)
        return written


def companies_of(documents: int) -> int:
    """Companies whose documents make up the first `documents` documents."""
    return max(1, math.ceil(documents / DOCS_PER_COMPANY))


def default_conversations(documents: int) -> int:
    """Conversation logs that go with `documents` documents: one per `CONVERSATION_EVERY`."""
    return max(1, documents // CONVERSATION_EVERY) if documents else 0


def generate_collection(folder: Path, documents: int, seed: int = 0) -> list[Path]:
    """Write a collection of `documents` Markdown documents and its conversation logs."""
    if documents > CorpusGenerator.max_documents():
        raise ValueError(f"at most {CorpusGenerator.max_documents():,} documents can be generated")
    generator = CorpusGenerator(seed)
    return generator.write(folder, range(documents), range(default_conversations(documents)))


def questions(generator: CorpusGenerator, documents: int, count: int) -> list[str]:
    """`count` questions on facts of the first `documents` documents, in a seeded order."""
    templates = {
        "work_at": "Where does {h} work?",
        "locate_in": "Which city is the {h} located in?",
        "ceo_of": "Who is the CEO of {t}?",
        "lead": "Who leads {t}?",
        "launch": "Which company launched the {t}?",
        "error_on": "What does error {h} mean on the {t}?",
        "move_to": "Where did {h} move to?",
        "found": "Who founded {t}?",
    }
    rng = random.Random(f"{generator.seed}:questions")
    picks = []
    for _ in range(count):
        doc = generator.document(rng.randrange(max(documents, 1)))
        usable = [f for f in doc.facts if f.relation in templates]
        fact = rng.choice(usable)
        picks.append(templates[fact.relation].format(h=fact.head, t=fact.tail))
    return picks


def _profile(c: Company) -> tuple[str, list[str], list[Fact]]:
    founder, ceo = c.people[FOUNDER], c.people[CEO]
    return (
        f"Company profile, {c.name}",
        [
            f"{c.name} makes {c.category}.",
            f"{founder} founded {c.name} in {c.founded.year}.",
            f"{ceo} is the CEO of {c.name}.",
        ],
        [Fact(founder, "found", c.name), Fact(ceo, "ceo_of", c.name)],
    )


def _office(k: int):
    def template(c: Company) -> tuple[str, list[str], list[Fact]]:
        office, city, team = c.offices[k], c.cities[k], c.teams[k]
        return (
            f"{office} office opens",
            [
                f"{c.name} has opened the {office} Office.",
                f"The {office} Office is located in {city}.",
                f"{team} is based at the {office} Office.",
            ],
            [
                Fact(c.name, "open", f"{office} Office"),
                Fact(f"{office} Office", "locate_in", city),
                Fact(team, "base_at", f"{office} Office"),
            ],
        )

    return template


def _lead(k: int):
    def template(c: Company) -> tuple[str, list[str], list[Fact]]:
        person, office, team = c.people[LEAD_A + k], c.offices[k], c.teams[k]
        return (
            f"Meet the team, {person}",
            [f"{person} works at the {office} Office.", f"{person} leads {team}."],
            [Fact(person, "work_at", f"{office} Office"), Fact(person, "lead", team)],
        )

    return template


def _engineer(c: Company) -> tuple[str, list[str], list[Fact]]:
    person, office, city = c.people[ENGINEER], c.offices[0], c.cities[0]
    return (
        f"New colleague, {person}",
        [f"{person} works at the {office} Office.", f"{person} lives in {city}."],
        [Fact(person, "work_at", f"{office} Office"), Fact(person, "live_in", city)],
    )


def _launch(k: int):
    def template(c: Company) -> tuple[str, list[str], list[Fact]]:
        product, team, code = c.products[k], c.teams[k], c.codes[k]
        sentences = [f"{c.name} launched the {product}.", f"{team} designed the {product}."]
        facts = [Fact(c.name, "launch", product), Fact(team, "design", product)]
        if k:
            sentences.append(f"Error {code} is an error on the {product}.")
            facts.append(Fact(code, "error_on", product))
        return f"{product} launch", sentences, facts

    return template


def _incident(c: Company) -> tuple[str, list[str], list[Fact]]:
    product, code, fault = c.products[0], c.codes[0], c.faults[0]
    return (
        f"Incident report, {code} errors on {product}",
        [
            f"Error {code} is an error on the {product}.",
            f"The device shows it when it detects {fault}, and it stops until reset.",
            f"{c.teams[0]} published a fix for the {product}.",
        ],
        [Fact(code, "error_on", product), Fact(c.teams[0], "publish_for", product)],
    )


def _ceo_change(c: Company) -> tuple[str, list[str], list[Fact]]:
    new, old = c.people[NEW_CEO], c.people[CEO]
    return (
        f"{new} becomes chief executive",
        [f"{new} is the CEO of {c.name}.", f"{new} succeeded {old} as chief executive."],
        [Fact(new, "ceo_of", c.name), Fact(new, "succeed", old)],
    )


def _relocation(c: Company) -> tuple[str, list[str], list[Fact]]:
    person, office, city = c.people[ENGINEER], c.offices[1], c.cities[2]
    return (
        f"{person} relocates",
        [f"{person} moved to {city}.", f"{person} works at the {office} Office."],
        [Fact(person, "move_to", city), Fact(person, "work_at", f"{office} Office")],
    )


_DOCUMENTS = {
    "profile": _profile,
    "office-a": _office(0),
    "office-b": _office(1),
    "lead-a": _lead(0),
    "lead-b": _lead(1),
    "engineer": _engineer,
    "launch-a": _launch(0),
    "incident": _incident,
    "ceo-change": _ceo_change,
    "relocation": _relocation,
    "launch-b": _launch(1),
}
