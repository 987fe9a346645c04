/*
 * dataset.c: the fixed word lists of the data set (dataset.h).
 */
#include "tiles/dataset.h"

#include <stddef.h>

static const char *const tag_words[TB_WEB_TAGS] = {
    "music",    "art",       "food",     "wine",    "beer",     "coffee",  "jazz",     "rock",      "blues",
    "opera",    "theater",   "film",     "comedy",  "dance",    "poetry",  "books",    "history",   "science",
    "space",    "robots",    "coding",   "linux",   "startup",  "design",  "photo",    "travel",    "hiking",
    "cycling",  "running",   "yoga",     "chess",   "games",    "soccer",  "tennis",   "golf",      "sailing",
    "fishing",  "garden",    "cooking",  "baking",  "vegan",    "market",  "crafts",   "fashion",   "kids",
    "family",   "dogs",      "cats",     "birds",   "nature",   "climate", "energy",   "solar",     "cars",
    "trains",   "planes",    "boats",    "museum",  "gallery",  "concert", "festival", "party",     "charity",
    "health",   "fitness",   "medicine", "law",     "finance",  "crypto",  "economy",  "politics",  "debate",
    "language", "spanish",   "french",   "german",  "japanese", "writing", "comics",   "anime",     "retro",
    "vinyl",    "radio",     "podcast",  "meetup",  "workshop", "lecture", "seminar",  "hackathon", "networking",
    "careers",  "volunteer", "church",   "holiday", "winter",   "summer",  "spring",   "autumn",    "night",
    "sunrise"};

const char *tb_web_tag(int i) { return i >= 0 && i < TB_WEB_TAGS ? tag_words[i] : NULL; }
