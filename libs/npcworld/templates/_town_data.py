"""Word lists for generated towns: given names, surnames, town and street names, traits, hobbies and the
kinds of workplace with their rooms, objects and jobs."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "ANIMALS",
    "EVENING_HABITS",
    "FEMALE_NAMES",
    "HOBBIES",
    "MALE_NAMES",
    "STREET_NAMES",
    "SURNAMES",
    "TOWN_NAMES",
    "TRAITS",
    "WORKPLACES",
    "Workplace",
]

# fmt: off
FEMALE_NAMES = (
    "Ada", "Agnes", "Aiko", "Alma", "Amara", "Anya", "Astrid", "Beatrix", "Bianca", "Bridget", "Camila",
    "Carmen", "Celeste", "Chiara", "Clara", "Dalia", "Daphne", "Delia", "Edith", "Elena", "Elif", "Elsa",
    "Esme", "Fatima", "Flora", "Freya", "Greta", "Hana", "Harriet", "Hazel", "Helga", "Ida", "Ines", "Ingrid",
    "Iris", "Isla", "Ivy", "Jana", "Jasmine", "Joanna", "June", "Kaia", "Keiko", "Lara", "Leila", "Lena",
    "Lidia", "Lila", "Lucia", "Lydia", "Mabel", "Maeve", "Maja", "Malika", "Maren", "Marta", "Maya",
    "Meera", "Mila", "Mina", "Miriam", "Nadia", "Naomi", "Nell", "Nina", "Noor", "Olga", "Olive", "Paloma",
    "Petra", "Pia", "Priya", "Rania", "Rhea", "Rosa", "Ruth", "Sabine", "Sana", "Selma", "Signe", "Simone",
    "Sofia", "Sunita", "Talia", "Tamsin", "Thea", "Tove", "Una", "Vera", "Vida", "Wanda", "Yara", "Yusra",
    "Zara", "Zofia", "Adaeze", "Chioma", "Ngozi", "Folake", "Wanjiru", "Akosua", "Mei", "Lin", "Sakura",
)
MALE_NAMES = (
    "Aaron", "Abel", "Adrian", "Ahmed", "Alden", "Amir", "Anders", "Arlo", "Arvid", "Basil", "Bruno",
    "Caleb", "Callum", "Cyrus", "Dario", "Dev", "Dmitri", "Eamon", "Edgar", "Elias", "Emil", "Enzo", "Ezra",
    "Felix", "Finn", "Gus", "Hamid", "Hugo", "Idris", "Igor", "Ivan", "Jasper", "Jonas", "Jorge", "Julian",
    "Kai", "Kenji", "Kofi", "Lars", "Leon", "Levi", "Luca", "Magnus", "Malik", "Marco", "Mateo", "Milo",
    "Nico", "Nils", "Omar", "Oscar", "Otto", "Pablo", "Pavel", "Piotr", "Quentin", "Rafael", "Ravi", "Reuben",
    "Rohan", "Rufus", "Sami", "Silas", "Soren", "Stellan", "Tariq", "Teo", "Theo", "Tobias", "Tomas", "Ugo",
    "Victor", "Viktor", "Wes", "Xavier", "Yannick", "Yusuf", "Zane", "Chidi", "Emeka", "Kwame", "Tunde",
    "Jabari", "Hiro", "Ren", "Wei", "Jun", "Arjun", "Vikram", "Anil", "Farid", "Karim", "Bilal", "Oren",
    "Ilan", "Dov", "Mikael", "Henrik", "Bram", "Joost", "Fergus", "Ewan", "Rory", "Declan", "Cormac",
)
SURNAMES = (
    "Abara", "Ackland", "Aldous", "Alvarez", "Amsel", "Ashby", "Bakker", "Balogun", "Barros", "Beaumont",
    "Bergstrom", "Bishop", "Blackwood", "Bramley", "Brandt", "Calder", "Carrow", "Castillo", "Chandra",
    "Chen", "Colby", "Cordova", "Crane", "Dahl", "Dalca", "Demir", "Desai", "Drummond", "Dubois", "Eklund",
    "Ellery", "Esposito", "Fairweather", "Falk", "Fenwick", "Ferreira", "Finch", "Fischer", "Forde", "Fujita",
    "Galloway", "Garnier", "Gill", "Grant", "Greaves", "Halloran", "Harlan", "Hartley", "Haskins", "Hedlund",
    "Holm", "Hollis", "Ibarra", "Ikeda", "Iyer", "Jansen", "Jovanovic", "Kahale", "Kaur", "Keane",
    "Kettering", "Kim", "Kovacs", "Kowalski", "Lachance", "Lindqvist", "Lowell", "Lund", "Madsen", "Mahler",
    "Marsh", "Mbeki", "Mendes", "Moreau", "Morrow", "Nakamura", "Navarro", "Nilsen", "Novak", "Nowak",
    "Oduya", "Okafor", "Olsen", "Ortega", "Osei", "Pell", "Perrin", "Petrov", "Quill", "Quint", "Rahman",
    "Ramos", "Rasmussen", "Reyes", "Rios", "Rosen", "Sato", "Schofield", "Sharma", "Silva", "Sokol",
    "Stroud", "Sutton", "Tanaka", "Thorne", "Torres", "Tran", "Ueda", "Underhill", "Varga", "Vasquez",
    "Vidal", "Voss", "Wainwright", "Walcott", "Weller", "Whitlock", "Winter", "Wren", "Yilmaz", "Yoon",
    "Zamora", "Zielinski", "Achebe", "Adeyemi", "Bianchi", "Campbell", "Dunmore", "Eriksen", "Fontaine",
    "Gallagher", "Haddad", "Ivanova", "Jaramillo", "Kuznetsov", "Larkin", "Moretti", "Ng", "Oyelaran",
    "Pryce", "Quintero", "Rowntree", "Sandoval", "Takahashi", "Umarov", "Vance", "Whitaker", "Xu", "Yates",
)
ANIMALS = (
    "Copper Heron", "Red Fox", "Golden Hind", "Black Swan", "Grey Goose", "Drowsy Badger", "Silver Otter",
    "Laughing Crow", "Old Stag", "Blue Boar", "Wandering Hare", "Jolly Pike",
)
TOWN_NAMES = (
    "Alder Crossing", "Ashcombe", "Bramblewick", "Caddon Ford", "Elmstead", "Fallowmere", "Gorsey Bank",
    "Harrowgate Vale", "Kestrel Bay", "Larkfield", "Millbridge", "Oakhurst", "Pennywell", "Rookhaven",
    "Saltmarsh", "Thistledown", "Willowby", "Yarrow Hill",
)
STREET_NAMES = (
    "Alder", "Ash", "Beech", "Birch", "Bridge", "Brook", "Castle", "Cedar", "Chapel", "Cherry", "Church",
    "Clover", "Elm", "Fern", "Field", "Foundry", "Garden", "Hawthorn", "Heather", "Hill", "Holly", "King",
    "Lark", "Linden", "Maple", "Meadow", "Mill", "Orchard", "Park", "Pine", "Poplar", "Queen", "River",
    "Rowan", "School", "Spring", "Station", "Tanner", "Vine", "Water", "Weaver", "Willow", "Wharf", "Yew",
)
TRAITS = (
    "warm", "organised", "sociable", "earnest", "talkative", "stubborn", "curious", "shy", "patient",
    "impulsive", "cheerful", "reserved", "witty", "generous", "anxious", "ambitious", "thoughtful", "blunt",
    "gentle", "restless", "meticulous", "dreamy", "practical", "kind", "sarcastic", "loyal", "proud",
    "easygoing", "nosy", "diligent", "playful", "frugal", "outspoken", "calm", "sentimental", "competitive",
)
HOBBIES = (
    "baking bread", "birdwatching", "chess", "crossword puzzles", "fishing", "gardening", "knitting",
    "painting watercolours", "playing the guitar", "reading detective novels", "running along the river",
    "woodworking", "photography", "writing poetry", "cycling", "singing in a choir", "restoring old radios",
    "pottery", "cooking spicy food", "collecting stamps", "swimming", "playing football",
    "sketching buildings",
)
# by the kind of place; "{first}" and "{place}" are filled in
EVENING_HABITS = {
    "pub": "{first} often has a drink at {place} in the evening",
    "park": "{first} likes to walk in {place} after dinner",
    "library": "{first} reads at {place} on quiet evenings",
    "cafe": "{first} meets friends at {place} after work",
}
# fmt: on


@dataclass(frozen=True)
class Workplace:
    """A kind of workplace: how its lot is named, its two rooms with their objects, and its jobs.

    ``jobs`` are occupations in hiring order (the first is the owner or head); ``{place}`` is the lot's name.
    ``ages`` bounds the age of whoever holds one of its jobs.
    """

    kind: str
    names: tuple[str, ...]
    rooms: tuple[tuple[str, tuple[str, ...]], tuple[str, tuple[str, ...]]]
    jobs: tuple[str, ...]
    ages: tuple[int, int] = (22, 66)
    walls: bool = True


def _w(kind: str, names: str, rooms: tuple[tuple[str, str], tuple[str, str]], jobs: str,
       ages: tuple[int, int] = (22, 66), walls: bool = True) -> Workplace:
    (a, a_objects), (b, b_objects) = rooms
    rooms_def = ((a, tuple(a_objects.split("|"))), (b, tuple(b_objects.split("|"))))
    return Workplace(kind, tuple(names.split("|")), rooms_def, tuple(jobs.split("|")), ages, walls)


# The first five kinds are in every town (the party's venue, the pub, the grocery, the town hall, the park);
# the others (not the town hall) are drawn until there are jobs for everyone.
WORKPLACES = (
    _w("cafe", "{surname} Cafe|The Lantern Cafe|Corner Cafe", (("cafe floor", "tables|piano|window seat"),
       ("counter", "coffee machine|cash register|pastry case")),
       "owner of {place}|barista at {place}|cook at {place}|waiter at {place}|baker at {place}"),
    _w("pub", "The {animal}|The {animal} Inn", (("bar", "bar counter|beer taps|fireplace"),
       ("back room", "pool table|dartboard")),
       "landlord of {place}|bartender at {place}|cook at {place}|cellar hand at {place}"),
    _w("grocery", "{surname} Grocery|{street} Market", (("grocery aisles", "produce shelves|bread rack"),
       ("checkout", "grocery register|baskets")),
       "owner of {place}|grocer at {place}|cashier at {place}|stock clerk at {place}|"
       "delivery driver for {place}"),
    _w("hall", "{town} Town Hall", (("council chamber", "podium|public benches"),
       ("clerk's office", "clerk's desk|notice board|filing cabinet")),
       "town clerk at {place}|council secretary at {place}|records officer at {place}|"
       "planning officer at {place}"),
    _w("park", "{street} Park|{town} Green", (("lawn", "bench|flower beds"),
       ("pond", "fishing pier|boathouse")),
       "park keeper at {place}|gardener at {place}|volunteer gardener at {place}", (22, 85), walls=False),
    _w("pharmacy", "{surname} Pharmacy", (("pharmacy counter", "medicine shelf|pharmacy register"),
       ("dispensary", "pill counter|fridge")),
       "pharmacist at {place}|pharmacy assistant at {place}|dispenser at {place}"),
    _w("hardware", "{surname} Hardware", (("shop floor", "tool shelves|shop register"),
       ("workbench", "vice|saw")),
       "owner of {place}|shop assistant at {place}|locksmith at {place}"),
    _w("college", "{town} College|{street} College", (("lecture hall", "lectern|blackboard|rows of seats"),
       ("library", "book stacks|reading desk")),
       "professor at {place}|student at {place}|student at {place}|lecturer at {place}|student at {place}|"
       "student at {place}|librarian at {place}|student at {place}", (18, 70)),
    _w("school", "{street} School", (("classroom", "desks|whiteboard"), ("staff room", "kettle|pigeonholes")),
       "head teacher at {place}|teacher at {place}|teacher at {place}|teaching assistant at {place}|"
       "caretaker at {place}"),
    _w("clinic", "{street} Clinic", (("waiting room", "chairs|reception desk"),
       ("surgery", "examination table|medicine cabinet")),
       "doctor at {place}|nurse at {place}|receptionist at {place}|nurse at {place}"),
    _w("bakery", "{surname} Bakery", (("shop", "bread shelves|till"), ("bakehouse", "oven|flour sacks")),
       "baker and owner of {place}|baker at {place}|shop assistant at {place}"),
    _w("bookshop", "{surname} Books", (("shop", "bookshelves|armchair"),
       ("back office", "desk|boxes of books")),
       "bookseller and owner of {place}|bookseller at {place}"),
    _w("garage", "{street} Garage", (("workshop", "car lift|tool wall"), ("office", "counter|coffee pot")),
       "mechanic and owner of {place}|mechanic at {place}|apprentice mechanic at {place}"),
    _w("library", "{town} Library|{street} Library", (("reading room", "reading tables|newspaper rack"),
       ("stacks", "shelves|catalogue terminal")),
       "librarian at {place}|volunteer at {place}|volunteer at {place}|archivist at {place}", (22, 85)),
    _w("restaurant", "{surname}'s Kitchen|The {animal} Restaurant", (("dining room", "tables|wine rack"),
       ("kitchen", "stove|sink|fridge")),
       "chef and owner of {place}|cook at {place}|waiter at {place}|dishwasher at {place}"),
    _w("workshop", "{surname} Joinery|{surname} Pottery", (("workshop", "workbench|lathe|kiln"),
       ("showroom", "display table|till")),
       "craftsman and owner of {place}|apprentice at {place}|craftsman at {place}"),
    _w("office", "{town} Gazette|{surname} and Partners", (("open office", "desks|printer"),
       ("meeting room", "meeting table|whiteboard")),
       "editor at {place}|reporter at {place}|accountant at {place}|clerk at {place}|designer at {place}"),
    _w("florist", "{surname} Flowers", (("shop", "flower buckets|till"),
       ("greenhouse", "seed trays|watering can")),
       "florist and owner of {place}|florist at {place}"),
)
